// SPDX-License-Identifier: GPL-2.0-only
/*
 * Snoop: tables of packet sequences and the actions they must produce.
 * Defaults unless a case says otherwise: rtx_thresh 1, rto_initial 200 ms,
 * rto_min 20 ms, max_local_rtx 4, hide_sack on.  1000-byte segments; the
 * wireless host's window is 1000 throughout (so equal ACKs are dupacks).
 */
#include "filter_snoop.h"
#include "tcase.h"

/* Classic sender (no SACK): one wireless loss, repaired on the first dupack. */
static const struct step single_loss[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000),
	A(40, 1000, FWD, ""),
	A(42, 1000, DROP, "rtx 1000"),	/* 2000 arrived: the hole is 1000 */
	A(43, 1000, DROP, ""),		/* 3000: expected, the rtx is still on its way */
	A(44, 1000, DROP, ""),
	A(85, 5000, FWD, ""),		/* the rtx arrived: everything acknowledged */
	END_,
};

/* The local retransmission is lost too: found when data sent after it arrives. */
static const struct step lost_rtx[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000), D(6, 6000),
	A(40, 1000, FWD, ""),
	A(42, 1000, DROP, "rtx 1000"),
	A(43, 1000, DROP, ""), A(44, 1000, DROP, ""), A(45, 1000, DROP, ""), A(46, 1000, DROP, ""),
	D(47, 7000),			/* sent after the rtx */
	A(90, 1000, DROP, "rtx 1000"),	/* 7000 arrived, 1000 did not: the rtx was lost */
	A(130, 8000, FWD, ""),
	END_,
};

/* No SACK, two holes: the second is found at the partial ACK that ends the first. */
static const struct step two_holes_reno[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000),
	A(40, 1000, FWD, ""),
	A(42, 1000, DROP, "rtx 1000"),
	A(44, 1000, DROP, ""),		/* 4000 (3000 is lost too) */
	A(45, 1000, DROP, ""),
	A(85, 3000, FWD, "rtx 3000"),	/* the rtx of 1000 arrived; 3000 was sent before it: lost */
	A(125, 6000, FWD, ""),
	END_,
};

/* SACK: the hole is found from the blocks, and the blocks never reach the sender. */
static const struct step sack_single[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, DROP, false, "rtx 1000", 1, { 2000, 3000 }),
	AS(43, 1000, DROP, false, "", 1, { 2000, 4000 }),
	AS(44, 1000, DROP, false, "", 1, { 2000, 5000 }),
	A(85, 5000, FWD, ""),
	END_,
};

/* SACK, two holes: both retransmitted as the blocks reveal them; a partial ACK goes on with its blocks hidden. */
static const struct step sack_two_holes[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, DROP, false, "rtx 1000", 1, { 2000, 3000 }),
	AS(44, 1000, DROP, false, "rtx 3000", 2, { 4000, 5000 }, { 2000, 3000 }),
	AS(45, 1000, DROP, false, "", 2, { 4000, 6000 }, { 2000, 3000 }),
	AS(85, 3000, FWD, true, "", 1, { 4000, 6000 }),
	A(87, 6000, FWD, ""),
	END_,
};

/* A hole this box never saw (lost on the wired side): dupacks and SACK go to the sender. */
static const struct step uncached_hole[] = {
	D(0, 0), D(2, 2000), D(3, 3000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, FWD, false, "", 1, { 2000, 3000 }),
	AS(43, 1000, FWD, false, "", 1, { 2000, 4000 }),
	D(80, 1000),			/* the sender's fast retransmit: cached, forwarded */
	A(120, 4000, FWD, ""),
	END_,
};

/* The sender retransmits data the wireless host has: drop, answer with its ACK (rate-limited). */
static const struct step acked_rtx[] = {
	D(0, 0), D(1, 1000),
	A(40, 2000, FWD, ""),
	D_(50, 0, DROP, "ack 2000"),
	D_(55, 1000, DROP, ""),		/* within rto_min of the last generated ACK */
	D_(80, 0, DROP, "ack 2000"),
	END_,
};

/* A lost tail: only the timer can find it; backoff doubles, rto_max caps, max_local_rtx gives up. */
static const struct step tail_timer[] = {
	D(0, 0), D(1, 1000),
	A(40, 1000, FWD, ""),		/* srtt 40 ms, rttvar 20 ms: rto 120 ms */
	TK(121, "rtx 1000"),
	TK(361, "rtx 1000"),		/* 240 ms after */
	TK(841, "rtx 1000"),		/* 480 ms */
	TK(1801, "rtx 1000"),		/* 960 ms */
	TK(2801, ""),			/* rto_max 1 s; four rounds done: left to the sender */
	A(2850, 1000, FWD, ""),		/* so its dupacks pass */
	END_,
};

/* Not dupacks: a window update passes; an ACK older than one seen is dropped. */
static const struct step not_dupacks[] = {
	D(0, 0), D(1, 1000), D(2, 2000),
	A(40, 1000, FWD, ""),
	AW(41, 1000, 2000, FWD, ""),
	A(42, 2000, FWD, ""),
	A(43, 1000, DROP, ""),
	A(80, 3000, FWD, ""),
	END_,
};

/* With a small per-flow bound only two segments fit: the third passes uncached. */
static const struct step cache_bound[] = {
	D(0, 0), D(1, 1000), D(2, 2000),
	A(40, 2000, FWD, ""),
	A(42, 2000, FWD, ""),		/* the hole is not cached: the sender must see this */
	A(80, 3000, FWD, ""),
	END_,
};

/*
 * This box's own queue refuses 2000 (congestion): not repaired locally,
 * its dupacks and SACK blocks go to the sender, which must slow down.
 */
static const struct step queue_drop[] = {
	D(0, 0), D(1, 1000), DQ(2, 2000), D(3, 3000), D(4, 4000),
	A(40, 2000, FWD, ""),
	AS(42, 2000, FWD, false, "", 1, { 3000, 4000 }),
	AS(43, 2000, FWD, false, "", 1, { 3000, 5000 }),
	D(80, 2000),			/* the sender's fast retransmit */
	A(120, 5000, FWD, ""),
	END_,
};

/* A local retransmission the queue refuses: the hole becomes the sender's. */
static const struct step queue_drop_rtx[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000),
	A(40, 1000, FWD, ""),
	AQ(42, 1000, DROP, "rtx 1000"),	/* dropped: it triggered our rtx (which the queue refused) */
	A(43, 1000, FWD, ""),		/* from now on the sender sees them */
	END_,
};

static int run_case(const char *name, const struct step *steps, int family, bool sack, uint32_t isn,
		    void (*tweak)(struct pep_config *), const char *expect_counters)
{
	struct harness h;
	int failed;

	h_init(&h, &filter_snoop, family, sack, isn);
	if (tweak)
		tweak(&h.cfg);
	flow_table_free(&h.ft);
	if (flow_table_init(&h.ft, 16, 42, h.cfg.total_cache_bytes, (uint32_t)h.cfg.flow_cache_bytes) < 0)
		abort();
	h_handshake(&h);
	failed = h_run(&h, name, steps);
	if (expect_counters) {
		char buf[256], *tok, *save = NULL;

		snprintf(buf, sizeof(buf), "%s", expect_counters);
		for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			char *eq = strchr(tok, '=');
			unsigned long long want = strtoull(eq + 1, NULL, 10), got = ~0ULL;

			*eq = '\0';
#define PICK(n, d) if (strcmp(tok, #n) == 0) got = h.flow->cnt.n;
			PEP_FLOW_COUNTERS(PICK)
#undef PICK
			CHECK(got == want, "%s: %s = %llu, expected %llu", name, tok, got, want);
		}
	}
	/* the per-flow cache accounting must agree with the shared budget */
	CHECK(h.ft.budget.bytes == h.flow->cache.bytes, "%s: budget %llu vs flow %u", name,
	      (unsigned long long)h.ft.budget.bytes, h.flow->cache.bytes);
	h_free(&h);
	return failed;
}

static void small_cache(struct pep_config *c)
{
	c->flow_cache_bytes = 2200;	/* two 1052-byte packets */
}

int main(void)
{
	run_case("single_loss", single_loss, 4, false, 1000000, NULL,
		 "local_rtx=1 dupacks_dropped=3 cached_packets=5 dupacks_forwarded=0");
	run_case("single_loss/ipv6", single_loss, 6, false, 1000000, NULL, "local_rtx=1 dupacks_dropped=3");
	run_case("single_loss/wrap", single_loss, 4, false, 0xfffff000u, NULL, "local_rtx=1 dupacks_dropped=3");
	run_case("lost_rtx", lost_rtx, 4, false, 1000000, NULL, "local_rtx=2 dupacks_dropped=6");
	run_case("two_holes_reno", two_holes_reno, 4, false, 1000000, NULL, "local_rtx=2");
	run_case("sack_single", sack_single, 4, true, 1000000, NULL, "local_rtx=1 dupacks_dropped=3");
	run_case("sack_single/ipv6", sack_single, 6, true, 1000000, NULL, "local_rtx=1");
	run_case("sack_two_holes", sack_two_holes, 4, true, 1000000, NULL, "local_rtx=2 sack_hidden=1");
	run_case("sack_two_holes/wrap", sack_two_holes, 4, true, 0xffffe000u, NULL, "local_rtx=2 sack_hidden=1");
	run_case("uncached_hole", uncached_hole, 4, true, 1000000, NULL,
		 "local_rtx=0 dupacks_forwarded=2 sender_rtx=1 sack_hidden=0");
	run_case("acked_rtx", acked_rtx, 4, false, 1000000, NULL, "data_dropped=3 acks_generated=2");
	run_case("tail_timer", tail_timer, 4, false, 1000000, NULL,
		 "local_rtx_timer=4 rtx_given_up=1 timer_expiries=5 dupacks_forwarded=1");
	run_case("not_dupacks", not_dupacks, 4, false, 1000000, NULL, "stale_acks_dropped=1 dupacks_dropped=0");
	run_case("queue_drop", queue_drop, 4, true, 1000000, NULL,
		 "queue_drops=1 local_rtx=0 dupacks_forwarded=2 sack_hidden=0");
	run_case("queue_drop_rtx", queue_drop_rtx, 4, false, 1000000, NULL,
		 "queue_drops=1 local_rtx=1 dupacks_dropped=1 dupacks_forwarded=1");
	run_case("cache_bound", cache_bound, 4, false, 1000000, small_cache, "cache_full=1 cached_packets=2");
	return tc_report("test_snoop");
}
