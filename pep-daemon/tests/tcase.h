/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Test harness for the filters: no netfilter, no sockets.  A table is a
 * sequence of steps (a data segment from the fixed host, an ACK from the
 * wireless host, or a clock tick that fires due timers) and, for each
 * step, the verdict and the actions the filter must produce, written the
 * way the harness prints them:
 *
 *     "rtx 2000"       send the cached segment at 2000 once
 *     "rtx 2000x3"     ... three times (1 + 2 extra copies)
 *     "ack 5000"       send the fixed host an ACK for 5000
 *     "ack 5000 win 7" ... with the window field 7 (raw; the clamp's), not the wireless host's
 *     "dsack 5000 1000-2000"  ... with a D-SACK block for 1000-2000
 *     "sack 3000-6000" the ACK goes on with its SACK option cut to this block
 *     "win 5"          the ACK goes on with its window field set to 5
 *     ""               nothing
 *
 * A data segment "forwarded" (FWD) may be accepted or injected (sent by
 * pepd itself); the harness plays the egress queue and tells the filter
 * it took every packet, unless a step says the queue refused it (QD).
 *
 * Sequence numbers in tables are relative: 0 is the first data byte.
 * Segments are 1000 bytes unless a step says otherwise.
 */
#ifndef PEPD_TCASE_H
#define PEPD_TCASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "check.h"
#include "csum.h"
#include "filter.h"
#include "flow.h"
#include "packet.h"
#include "seq.h"

/* ---------------------------------------------------------------- packets */

struct tpkt {
	int family;		/* 4 or 6 */
	bool from_fh;		/* true: fixed host -> wireless host */
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win;
	uint32_t len;		/* payload bytes */
	bool ts;
	uint32_t tsval, tsecr;
	bool sack_perm;
	uint16_t mss;
	uint8_t nsack;
	struct sack_block sack[4];
};

static const uint8_t TC_FH4[4] = { 10, 0, 1, 1 }, TC_WH4[4] = { 10, 0, 2, 2 };
static const uint8_t TC_FH6[16] = { 0xfd, 0, 0, 1, [15] = 1 }, TC_WH6[16] = { 0xfd, 0, 0, 2, [15] = 2 };
#define TC_FH_PORT 5201
#define TC_WH_PORT 40000

static inline void tc_put16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static inline void tc_put32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

/* Serialize a TCP segment with correct lengths and checksums; returns its length. */
static inline uint32_t tc_build(const struct tpkt *t, uint8_t *buf, size_t bufsz)
{
	uint8_t opt[40];
	uint32_t olen = 0, iphl = t->family == 4 ? 20 : 40, thl, total, i;
	const uint8_t *src, *dst;
	uint8_t *tcp;

	if (t->mss) {
		opt[olen++] = TCPOPT_MSS;
		opt[olen++] = 4;
		tc_put16(opt + olen, t->mss);
		olen += 2;
	}
	if (t->sack_perm) {
		opt[olen++] = TCPOPT_NOP;
		opt[olen++] = TCPOPT_NOP;
		opt[olen++] = TCPOPT_SACK_PERM;
		opt[olen++] = 2;
	}
	if (t->ts) {
		opt[olen++] = TCPOPT_NOP;
		opt[olen++] = TCPOPT_NOP;
		opt[olen++] = TCPOPT_TIMESTAMP;
		opt[olen++] = 10;
		tc_put32(opt + olen, t->tsval);
		tc_put32(opt + olen + 4, t->tsecr);
		olen += 8;
	}
	if (t->nsack) {
		opt[olen++] = TCPOPT_NOP;
		opt[olen++] = TCPOPT_NOP;
		opt[olen++] = TCPOPT_SACK;
		opt[olen++] = (uint8_t)(2 + 8 * t->nsack);
		for (i = 0; i < t->nsack; i++) {
			tc_put32(opt + olen, t->sack[i].start);
			tc_put32(opt + olen + 4, t->sack[i].end);
			olen += 8;
		}
	}
	while (olen % 4)
		opt[olen++] = TCPOPT_NOP;
	thl = 20 + olen;
	total = iphl + thl + t->len;
	if (total > bufsz)
		abort();
	memset(buf, 0, total);
	if (t->family == 4) {
		src = t->from_fh ? TC_FH4 : TC_WH4;
		dst = t->from_fh ? TC_WH4 : TC_FH4;
		buf[0] = 0x45;
		tc_put16(buf + 2, (uint16_t)total);
		tc_put16(buf + 6, 0x4000);
		buf[8] = 64;
		buf[9] = 6;
		memcpy(buf + 12, src, 4);
		memcpy(buf + 16, dst, 4);
		csum_ipv4_header(buf, 20);
	} else {
		src = t->from_fh ? TC_FH6 : TC_WH6;
		dst = t->from_fh ? TC_WH6 : TC_FH6;
		buf[0] = 0x60;
		tc_put16(buf + 4, (uint16_t)(thl + t->len));
		buf[6] = 6;
		buf[7] = 64;
		memcpy(buf + 8, src, 16);
		memcpy(buf + 24, dst, 16);
	}
	tcp = buf + iphl;
	tc_put16(tcp, t->from_fh ? TC_FH_PORT : TC_WH_PORT);
	tc_put16(tcp + 2, t->from_fh ? TC_WH_PORT : TC_FH_PORT);
	tc_put32(tcp + 4, t->seq);
	tc_put32(tcp + 8, t->ack);
	tcp[12] = (uint8_t)((thl / 4) << 4);
	tcp[13] = t->flags;
	tc_put16(tcp + 14, t->win);
	memcpy(tcp + 20, opt, olen);
	for (i = 0; i < t->len; i++)
		tcp[thl + i] = (uint8_t)(t->seq + i);
	csum_tcp(tcp, thl + t->len, t->family, src, dst);
	return total;
}

/* ---------------------------------------------------------------- the harness */

/* QDISC_DROP: the egress qdisc's drop counter is seen to rise at this step's time (egress_drops) */
enum step_kind { DATA, ACK, TICK, QDISC_DROP, END };

struct step {
	enum step_kind kind;
	uint32_t t_ms;		/* clock at this step */
	uint32_t seq;		/* DATA: relative sequence; ACK: relative ack */
	uint32_t len;		/* DATA: payload (0 means 1000); ACK: payload from the wireless host */
	uint16_t win;		/* ACK: window (0 means 1000) */
	uint8_t nsack;
	struct sack_block sack[4];	/* relative */
	enum pep_verdict verdict;
	bool hide;		/* ACK forwarded with SACK blanked */
	bool queue_refuses;	/* the egress queue refuses what this step sends */
	const char *actions;
};

struct harness {
	struct pep_config cfg;
	const struct pep_filter_ops *ops;
	struct flow_table ft;
	struct pep_counters total;
	struct flow *flow;
	int family;
	bool sack;
	uint32_t isn_fh, isn_wh;
	uint64_t now;
	uint64_t egress_drop_ns;	/* the last QDISC_DROP step's time */
	uint32_t tsval;
	uint32_t wh_tsval_last;	/* the TSval of the wireless host's last ACK: data echoes it */
	char last_actions[512];
	uint32_t bypass_asked;	/* packets whose out.bypass was set: the filter let the kernel stop queueing */
};

static inline void h_format(const struct harness *h, const struct pep_out *out, char *buf, size_t len)
{
	size_t used = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < out->nact; i++) {
		const struct pep_action *a = &out->act[i];
		uint32_t rel = a->seq - h->isn_fh - 1;

		if (a->type == ACTION_SEND_SEGMENT && a->copies == 1)
			used += (size_t)snprintf(buf + used, len - used, "%srtx %u", i ? ", " : "", rel);
		else if (a->type == ACTION_SEND_SEGMENT)
			used += (size_t)snprintf(buf + used, len - used, "%srtx %ux%u", i ? ", " : "", rel, a->copies);
		else if (a->type == ACTION_SEND_DSACK)
			used += (size_t)snprintf(buf + used, len - used, "%sdsack %u %u-%u", i ? ", " : "", rel,
						 a->dsack.start - h->isn_fh - 1, a->dsack.end - h->isn_fh - 1);
		else
			used += (size_t)snprintf(buf + used, len - used, "%sack %u", i ? ", " : "", rel);
		if (a->type != ACTION_SEND_SEGMENT && a->window >= 0 && used < len)
			used += (size_t)snprintf(buf + used, len - used, " win %d", a->window);
		if (used >= len)
			return;
	}
	for (i = 0; i < out->sack_n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%u-%u", i ? " " : used ? ", sack " : "sack ",
					 out->sack_blocks[i].start - h->isn_fh - 1, out->sack_blocks[i].end - h->isn_fh - 1);
	if (out->set_window && used < len)
		snprintf(buf + used, len - used, "%swin %u", used ? ", " : "", out->window);
}

static inline void h_apply_timer(struct harness *h, const struct pep_out *out)
{
	if (out->timer_op == TIMER_SET)
		flow_timer_set(&h->ft, h->flow, out->timer_at);
	else if (out->timer_op == TIMER_CANCEL)
		flow_timer_cancel(&h->ft, h->flow);
}

/* Play the egress queue: report the fate of everything the filter sent. */
static inline void h_sent(struct harness *h, const struct pep_out *out, bool refuse)
{
	struct pep_ctx ctx = { .cfg = &h->cfg, .budget = &h->ft.budget, .hops = &h->ft.hops, .total = &h->total,
			       .now = h->now, .egress_drop_ns = h->egress_drop_ns };
	uint32_t i;

	if (!h->ops->sent)
		return;
	for (i = 0; i < out->nact; i++)
		if (out->act[i].type == ACTION_SEND_SEGMENT)
			h->ops->sent(h->flow, out->act[i].seq, !refuse, &ctx);
	if (out->verdict == VERDICT_INJECT) {
		/* every cached segment of the range: a GSO super-packet's slices, one by one */
		long k = segq_find(&h->flow->cache, out->inject_seq);

		for (; k >= 0 && (uint32_t)k < h->flow->cache.count; k++) {
			const struct seg *g = segq_at(&h->flow->cache, (uint32_t)k);

			if (!seq_before(g->seq, out->inject_end))
				break;
			h->ops->sent(h->flow, g->seq, !refuse, &ctx);
		}
	}
}

/* Run one raw packet through conn tracking and the filter. */
static inline void h_packet(struct harness *h, const struct tpkt *t, struct pep_out *out)
{
	static uint8_t buf[65536];	/* up to a GSO super-packet */
	uint32_t n = tc_build(t, buf, sizeof(buf));
	struct pep_ctx ctx = { .cfg = &h->cfg, .budget = &h->ft.budget, .hops = &h->ft.hops, .total = &h->total,
			       .now = h->now, .egress_drop_ns = h->egress_drop_ns };
	enum pep_dir dir = t->from_fh ? DIR_TO_WIRELESS : DIR_FROM_WIRELESS;
	struct flow_key key;
	struct pkt p;

	if (pkt_parse(buf, n, &p) != PKT_OK)
		abort();
	flow_key_of(&p, dir, &key);
	if (!h->flow) {
		h->flow = flow_create(&h->ft, &key, h->now);
		h->ops->init(h->flow, &ctx);
	}
	if (flow_lookup(&h->ft, &key) != h->flow)
		abort();	/* both directions must find the same flow */
	conn_observe(&h->flow->conn, &p, dir);
	out_reset(out);
	h->ops->packet(h->flow, &p, dir, &ctx, out);
	if (out->bypass)
		h->bypass_asked++;
	h_apply_timer(h, out);
}

static inline void h_init(struct harness *h, const struct pep_filter_ops *ops, int family, bool sack,
			  uint32_t isn)
{
	memset(h, 0, sizeof(*h));
	config_defaults(&h->cfg);
	h->cfg.rtx_thresh = 1;	/* the tables are written for the paper's ns-2 setting */
	h->cfg.window_clamp = false;	/* and for loss recovery alone; test_snoop has a clamp table */
	h->cfg.drop_dupacks = DROP_DUPACKS_TRUE;	/* and for the paper's Snoop, repairs hidden from */
	h->cfg.hide_sack = true;			/* every sender; test_snoop has tables for auto */
	h->cfg.dsack_dropped_rtx = false;		/* and for its D-SACKs */
	h->cfg.nwireless = 1;
	strcpy(h->cfg.wireless[0], "wlan0");
	h->ops = ops;
	h->family = family;
	h->sack = sack;
	h->isn_fh = isn;
	h->isn_wh = 77777;
	h->now = 1000000000ULL;	/* t = 0 ms is 1 s of monotonic time: no zero timestamps */
	h->tsval = 100;
	if (flow_table_init(&h->ft, 16, 42, h->cfg.total_cache_bytes, (uint32_t)h->cfg.flow_cache_bytes) < 0)
		abort();
}

/* The three-way handshake, the wireless host opening the connection (a download). */
static inline void h_handshake(struct harness *h)
{
	struct pep_out out;
	struct tpkt syn = { .family = h->family, .from_fh = false, .seq = h->isn_wh, .flags = TCPF_SYN,
			    .win = 65535, .ts = true, .tsval = h->tsval, .sack_perm = h->sack, .mss = 1000 };
	struct tpkt synack = { .family = h->family, .from_fh = true, .seq = h->isn_fh, .ack = h->isn_wh + 1,
			       .flags = TCPF_SYN | TCPF_ACK, .win = 65535, .ts = true, .tsval = 5000,
			       .tsecr = h->tsval, .sack_perm = h->sack, .mss = 1000 };
	struct tpkt ack = { .family = h->family, .from_fh = false, .seq = h->isn_wh + 1, .ack = h->isn_fh + 1,
			    .flags = TCPF_ACK, .win = 1000, .ts = true, .tsval = h->tsval, .tsecr = 5000 };

	/* a 40 ms round trip, as the tables' first data segments have, ending at t = 0 */
	h->now -= 40000000ULL;
	h_packet(h, &syn, &out);
	h_packet(h, &synack, &out);
	h->now += 40000000ULL;
	h_packet(h, &ack, &out);
}

static inline void h_tick(struct harness *h, struct pep_out *all)
{
	struct pep_ctx ctx = { .cfg = &h->cfg, .budget = &h->ft.budget, .hops = &h->ft.hops, .total = &h->total,
			       .now = h->now, .egress_drop_ns = h->egress_drop_ns };
	struct pep_out out;
	struct flow *f;
	uint32_t i;

	out_reset(all);
	while ((f = flow_timer_expired(&h->ft, h->now))) {
		out_reset(&out);
		h->ops->timer(f, &ctx, &out);
		h_apply_timer(h, &out);
		for (i = 0; i < out.nact; i++)
			all->act[all->nact++] = out.act[i];
	}
}

/* Run a table; returns the number of failed steps. */
static inline int h_run(struct harness *h, const char *name, const struct step *steps)
{
	int failed = 0, i;

	for (i = 0; steps[i].kind != END; i++) {
		const struct step *s = &steps[i];
		struct pep_out out;
		char got[512];
		uint64_t at = h->now - 1000000000ULL;
		uint64_t due;

		(void)at;
		h->now = 1000000000ULL + (uint64_t)s->t_ms * 1000000ULL;
		due = flow_timer_next(&h->ft);
		if (s->kind != TICK && due && due <= h->now) {
			fprintf(stderr, "%s: step %d: a timer was due at %.3f ms, before this step: add a TICK\n", name,
				i, (double)(due - 1000000000ULL) / 1e6);
			tc_failures++;
			return failed + 1;
		}
		h->tsval++;
		if (s->kind == DATA) {
			struct tpkt t = { .family = h->family, .from_fh = true, .seq = h->isn_fh + 1 + s->seq,
					  .ack = h->isn_wh + 1, .flags = TCPF_ACK | TCPF_PSH, .win = 65535,
					  .len = s->len ? s->len : 1000, .ts = true, .tsval = 5000 + (uint32_t)i,
					  .tsecr = h->wh_tsval_last };

			h_packet(h, &t, &out);
		} else if (s->kind == ACK) {
			struct tpkt t = { .family = h->family, .from_fh = false, .seq = h->isn_wh + 1,
					  .ack = h->isn_fh + 1 + s->seq, .flags = TCPF_ACK, .win = s->win ? s->win : 1000,
					  .len = s->len, .ts = true, .tsval = h->tsval, .tsecr = 5000, .nsack = s->nsack };
			int b;

			for (b = 0; b < s->nsack; b++) {
				t.sack[b].start = h->isn_fh + 1 + s->sack[b].start;
				t.sack[b].end = h->isn_fh + 1 + s->sack[b].end;
			}
			h->wh_tsval_last = h->tsval;
			h_packet(h, &t, &out);
		} else if (s->kind == QDISC_DROP) {
			out_reset(&out);
			h->egress_drop_ns = h->now;
		} else {
			h_tick(h, &out);
		}
		h_sent(h, &out, s->queue_refuses);
		h_format(h, &out, got, sizeof(got));
		tc_checks++;
		/* FWD in a table means "passed on": accepted, or injected by pepd */
		bool same_verdict = (out.verdict == VERDICT_DROP) == (s->verdict == VERDICT_DROP);

		if (strcmp(got, s->actions ? s->actions : "") != 0 ||
		    (s->kind != TICK && (!same_verdict || out.hide_sack != s->hide))) {
			fprintf(stderr,
				"%s: step %d (%s %u at %u ms): expected %s%s [%s], got %s%s [%s]\n", name, i,
				s->kind == DATA ? "data" : s->kind == ACK ? "ack" : "tick", s->seq, s->t_ms,
				s->verdict == VERDICT_DROP ? "drop" : "forward", s->hide ? "+hide" : "",
				s->actions ? s->actions : "",
				out.verdict == VERDICT_DROP ? "drop" : out.verdict == VERDICT_INJECT ? "inject" : "accept",
				out.hide_sack ? "+hide" : "", got);
			tc_failures++;
			failed++;
		}
	}
	return failed;
}

static inline void h_free(struct harness *h)
{
	flow_table_free(&h->ft);
}

/* Step constructors, so tables read like traces. */
#define D(t, s) { .kind = DATA, .t_ms = (t), .seq = (s), .verdict = VERDICT_ACCEPT }
#define DL(t, s, l) { .kind = DATA, .t_ms = (t), .seq = (s), .len = (l), .verdict = VERDICT_ACCEPT }
#define DQ(t, s) { .kind = DATA, .t_ms = (t), .seq = (s), .verdict = VERDICT_ACCEPT, .queue_refuses = true }
#define D_(t, s, v, a) { .kind = DATA, .t_ms = (t), .seq = (s), .verdict = (v), .actions = (a) }
#define A(t, a_, v, acts) { .kind = ACK, .t_ms = (t), .seq = (a_), .verdict = (v), .actions = (acts) }
#define AW(t, a_, w, v, acts) { .kind = ACK, .t_ms = (t), .seq = (a_), .win = (w), .verdict = (v), .actions = (acts) }
#define AS(t, a_, v, hide_, acts, n, ...) \
	{ .kind = ACK, .t_ms = (t), .seq = (a_), .verdict = (v), .hide = (hide_), .actions = (acts), \
	  .nsack = (n), .sack = { __VA_ARGS__ } }
#define ASW(t, a_, w, v, hide_, acts, n, ...) \
	{ .kind = ACK, .t_ms = (t), .seq = (a_), .win = (w), .verdict = (v), .hide = (hide_), .actions = (acts), \
	  .nsack = (n), .sack = { __VA_ARGS__ } }
#define ASQ(t, a_, v, hide_, acts, n, ...) \
	{ .kind = ACK, .t_ms = (t), .seq = (a_), .verdict = (v), .hide = (hide_), .actions = (acts), \
	  .nsack = (n), .sack = { __VA_ARGS__ }, .queue_refuses = true }
#define TK(t, acts) { .kind = TICK, .t_ms = (t), .actions = (acts) }
#define QDROP(t) { .kind = QDISC_DROP, .t_ms = (t), .verdict = VERDICT_ACCEPT }
#define AQ(t, a_, v, acts) { .kind = ACK, .t_ms = (t), .seq = (a_), .verdict = (v), .actions = (acts), .queue_refuses = true }
#define END_ { .kind = END }
#define FWD VERDICT_ACCEPT
#define DROP VERDICT_DROP

#endif
