// SPDX-License-Identifier: GPL-2.0-only
/*
 * How fast are the filters themselves (no netfilter, no sockets)?  A
 * steady stream of 1448-byte segments and the ACKs a receiver would send,
 * 1 % of the segments lost, through the parser, the flow table and each
 * filter, as the daemon does it.  Prints packets per second of one core.
 * The netfilter path is measured by `make bench` at the top level.
 */
#include <time.h>

#include "../tests/tcase.h"

#define SEGMENTS 200000
#define MSS 1448

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct stream {
	uint8_t (*pkt)[1600];
	uint32_t *len;
	enum pep_dir *dir;
	uint32_t n;
};

/* Data and ACKs of one flow with SACK; every 100th segment lost once. */
static void make_stream(struct stream *s, bool sack)
{
	uint32_t i, acked = 0, n = 0, hole = 0;
	bool have_hole = false;

	s->pkt = calloc(3 * SEGMENTS, sizeof(*s->pkt));
	s->len = calloc(3 * SEGMENTS, sizeof(*s->len));
	s->dir = calloc(3 * SEGMENTS, sizeof(*s->dir));
	if (!s->pkt || !s->len || !s->dir)
		abort();
	for (i = 0; i < SEGMENTS; i++) {
		uint32_t seq = 1 + i * MSS;
		struct tpkt d = { .family = 4, .from_fh = true, .seq = seq, .ack = 1, .flags = TCPF_ACK, .win = 65535,
				  .len = MSS, .ts = true, .tsval = i, .tsecr = i };
		struct tpkt a = { .family = 4, .from_fh = false, .seq = 1, .flags = TCPF_ACK, .win = 1000, .ts = true,
				  .tsval = i, .tsecr = i };

		s->len[n] = tc_build(&d, s->pkt[n], sizeof(s->pkt[n]));
		s->dir[n++] = DIR_TO_WIRELESS;
		if (i % 100 == 50 && !have_hole) {
			hole = seq;	/* lost: the next ACKs are dupacks */
			have_hole = true;
			continue;
		}
		if (have_hole && i % 100 == 53) {
			/* the local retransmission arrived */
			have_hole = false;
			acked = seq + MSS;
		} else if (!have_hole) {
			acked = seq + MSS;
		}
		a.ack = have_hole ? hole : acked;
		if (have_hole && sack) {
			a.nsack = 1;
			a.sack[0].start = hole + MSS;
			a.sack[0].end = seq + MSS;
		}
		s->len[n] = tc_build(&a, s->pkt[n], sizeof(s->pkt[n]));
		s->dir[n++] = DIR_FROM_WIRELESS;
	}
	s->n = n;
}

static void run(const char *name, const struct pep_filter_ops *ops, const struct stream *s)
{
	struct pep_config cfg;
	struct flow_table ft;
	struct pep_counters total = { 0 };
	struct pep_ctx ctx = { .cfg = &cfg, .total = &total };
	struct flow_key key;
	struct pep_out out;
	struct flow *f = NULL;
	double t0, t1;
	uint32_t i;

	config_defaults(&cfg);
	cfg.window_clamp = false;
	flow_table_init(&ft, 1024, 7, cfg.total_cache_bytes, (uint32_t)cfg.flow_cache_bytes);
	ctx.budget = &ft.budget;
	t0 = now_s();
	for (i = 0; i < s->n; i++) {
		struct pkt p;

		if (pkt_parse(s->pkt[i], s->len[i], &p) != PKT_OK)
			abort();
		ctx.now = (uint64_t)(1e9 + i * 10000.0);	/* 10 us apart */
		flow_key_of(&p, s->dir[i], &key);
		f = flow_lookup(&ft, &key);
		if (!f) {
			f = flow_create(&ft, &key, ctx.now);
			ops->init(f, &ctx);
		}
		flow_touch(&ft, f, ctx.now);
		conn_observe(&f->conn, &p, s->dir[i]);
		out_reset(&out);
		ops->packet(f, &p, s->dir[i], &ctx, &out);
		if (out.timer_op == TIMER_SET)
			flow_timer_set(&ft, f, out.timer_at);
		else if (out.timer_op == TIMER_CANCEL)
			flow_timer_cancel(&ft, f);
		if (ops->sent && out.verdict == VERDICT_INJECT)
			ops->sent(f, out.inject_seq, true, &ctx);
	}
	t1 = now_s();
	printf("  %-12s %9.0f packets/s (%u packets, %.3f s; local rtx %llu, dupacks kept %llu)\n", name,
	       s->n / (t1 - t0), s->n, t1 - t0, (unsigned long long)total.local_rtx,
	       (unsigned long long)total.dupacks_dropped);
	flow_table_free(&ft);
}

int main(void)
{
	struct stream with_sack, without;

	make_stream(&with_sack, true);
	make_stream(&without, false);
	printf("pepd filters alone (parse, flow lookup, filter; no netfilter), one core:\n");
	printf(" with SACK:\n");
	run("passthrough", &filter_passthrough, &with_sack);
	run("snoop", &filter_snoop, &with_sack);
	run("snoop+", &filter_snoopplus, &with_sack);
	run("pc", &filter_pc, &with_sack);
	printf(" without SACK:\n");
	run("snoop", &filter_snoop, &without);
	return 0;
}
