// SPDX-License-Identifier: GPL-2.0-only
/* The flow table: both directions find one flow, the bound, idle expiry, the timer heap. */
#include "tcase.h"

static struct flow_key key(uint16_t port)
{
	struct flow_key k = { .family = 4, .fh_port = 5201, .wh_port = port };

	memcpy(k.fh, TC_FH4, 4);
	memcpy(k.wh, TC_WH4, 4);
	return k;
}

static void directions(void)
{
	uint8_t a[2048], b[2048];
	struct tpkt down = { .family = 6, .from_fh = true, .seq = 1, .flags = TCPF_ACK, .len = 10 };
	struct tpkt up = { .family = 6, .from_fh = false, .seq = 1, .flags = TCPF_ACK };
	struct flow_key kd, ku;
	struct pkt pd, pu;

	pkt_parse(a, tc_build(&down, a, sizeof(a)), &pd);
	pkt_parse(b, tc_build(&up, b, sizeof(b)), &pu);
	flow_key_of(&pd, DIR_TO_WIRELESS, &kd);
	flow_key_of(&pu, DIR_FROM_WIRELESS, &ku);
	CHECK(memcmp(&kd, &ku, sizeof(kd)) == 0, "data and ACKs of a connection share one key");
	CHECK(kd.fh_port == TC_FH_PORT && kd.wh_port == TC_WH_PORT, "oriented from the fixed host");
}

static void bound_and_expiry(void)
{
	struct flow_table t;
	struct flow *f[4], *g;
	struct flow_key k;
	uint16_t i;

	CHECK(flow_table_init(&t, 3, 1, 1 << 20, 1 << 16) == 0, "init");
	for (i = 0; i < 3; i++) {
		k = key((uint16_t)(1000 + i));
		f[i] = flow_create(&t, &k, 100 + i);
		CHECK(f[i] != NULL, "flow %u", i);
	}
	k = key(2000);
	CHECK(flow_create(&t, &k, 200) == NULL, "a fourth flow does not fit");
	k = key(1001);
	CHECK(flow_lookup(&t, &k) == f[1], "lookup");
	flow_touch(&t, f[0], 300);
	g = flow_oldest_idle(&t, 400, 250);
	CHECK(g == f[1], "the oldest idle flow is the least recently seen");
	flow_destroy(&t, g);
	CHECK(flow_lookup(&t, &k) == NULL && t.nflows == 2, "destroyed");
	k = key(2000);
	CHECK(flow_create(&t, &k, 400) != NULL, "its slot is free again");
	CHECK(flow_oldest_idle(&t, 400, 250) == f[2], "next oldest");
	CHECK(flow_oldest_idle(&t, 400, 1000) == NULL, "nothing idle that long");
	flow_table_free(&t);
}

static void timers(void)
{
	struct flow_table t;
	struct flow *f[7], *e;
	/* what each flow's timer is set to below: 50 is cancelled, 60 moved to 5, 100 not due by 45 */
	static const uint64_t at[7] = { 50, 10, 40, 30, 20, 60, 100 };
	uint64_t deadline[7], last = 0;
	bool popped[7] = { false };
	struct flow_key k;
	int i, n = 0;

	flow_table_init(&t, 8, 1, 1 << 20, 1 << 16);
	for (i = 0; i < 7; i++) {
		k = key((uint16_t)(1000 + i));
		f[i] = flow_create(&t, &k, 0);
		flow_timer_set(&t, f[i], at[i]);
		deadline[i] = at[i];
	}
	flow_timer_set(&t, f[5], 5);	/* moved earlier */
	deadline[5] = 5;
	flow_timer_cancel(&t, f[0]);	/* 50 gone */
	deadline[0] = 0;
	CHECK(flow_timer_next(&t) == 5, "earliest first: %llu", (unsigned long long)flow_timer_next(&t));
	while ((e = flow_timer_expired(&t, 45))) {
		for (i = 0; i < 7 && f[i] != e; i++)
			;
		CHECK(i < 7 && !popped[i], "a flow with a timer, once");
		if (i == 7)
			break;
		popped[i] = true;
		CHECK(e->deadline == 0 && e->heap_idx == FLOW_NO_HEAP, "popped timers are cleared");
		/* the deadline it had, not the one it has now (0 after the pop) */
		CHECK(deadline[i] && deadline[i] <= 45, "only due ones: flow %d was set to %llu", i,
		      (unsigned long long)deadline[i]);
		CHECK(deadline[i] >= last, "in deadline order: %llu after %llu", (unsigned long long)deadline[i],
		      (unsigned long long)last);
		last = deadline[i];
		n++;
	}
	CHECK(n == 5, "five due by 45: %d", n);
	CHECK(!popped[0] && !popped[6], "the cancelled one and the one not due stay");
	CHECK(flow_timer_next(&t) == 100, "the one not due is left: %llu", (unsigned long long)flow_timer_next(&t));
	flow_timer_cancel(&t, f[6]);
	last = 0;
	/* many resets in arbitrary order, then every pop must come out in deadline order */
	for (n = 0; n < 60; n++)
		flow_timer_set(&t, f[n % 6], (uint64_t)(n * 37 % 97) + 1);
	n = 0;
	while (flow_timer_next(&t)) {
		uint64_t next = flow_timer_next(&t);

		e = flow_timer_expired(&t, 1000);
		CHECK(e && next >= last, "deadline order: %llu after %llu", (unsigned long long)next,
		      (unsigned long long)last);
		last = next;
		n++;
	}
	CHECK(n == 6, "each flow holds one timer: %d", n);
	flow_table_free(&t);
}

/* The TSval of a local retransmission (conn_repair_tsval), as a table. */
static void repair_tsval(void)
{
	static const struct {
		bool overtakes, wh_has_ts;
		uint32_t fh_newest, wh_tsecr, cached, want;
		const char *why;
	} cases[] = {
		{ false, true, 900, 500, 400, 900, "FIFO: the fixed host's newest" },
		{ true, true, 900, 500, 400, 500, "overtaking: raised to the receiver's TS.Recent" },
		{ true, true, 900, 300, 400, 400, "overtaking: its own, not newer than the queue" },
		{ true, false, 900, 0, 400, 400, "overtaking, no TSecr seen yet: its own" },
		{ true, true, 10, 0xfffffff0u, 5, 5, "wrap: 5 is after 0xfffffff0" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct conn c = { .fh_has_ts = true, .fh_tsval = cases[i].fh_newest, .wh_has_ts = cases[i].wh_has_ts,
				  .wh_tsecr = cases[i].wh_tsecr };
		uint32_t got = conn_repair_tsval(&c, cases[i].cached, cases[i].overtakes);

		CHECK(got == cases[i].want, "%s: %u, expected %u", cases[i].why, got, cases[i].want);
	}
}

int main(void)
{
	repair_tsval();
	directions();
	bound_and_expiry();
	timers();
	return tc_report("test_flow");
}
