// SPDX-License-Identifier: GPL-2.0-only
/*
 * arqd's state machines, sender and receiver back to back through a link
 * the table controls.  A table is a list of steps:
 *
 *   { "submit", "N" [, "LEN"] }   N IP packets (numbered on from 0) into the sender
 *   { "send", "N", "SEQS" }       the sender puts up to N frames on the link;
 *                                 SEQS: the sequence numbers it sent ("" none)
 *   { "data", "MASK", "PKTS" }    the data frames on the link, one letter
 *                                 each: p pass, d drop, c corrupt, u pass
 *                                 twice, s hold back (stays on the link);
 *                                 PKTS: the packets delivered up, in order
 *   { "feedback", "MASK" }        the same for acks and status frames
 *   { "tick", "MS", "PKTS" }      the clock moves on MS ms and every due
 *                                 timer runs; PKTS as for data
 *   { "count", "side.name=V ..." } counters (tx.*, rx.*, and "link" for
 *                                 frames rejected by the parser)
 *   { "forge", "SEQ BASE ID", "PKTS" } a data frame the sender never sent
 *                                 (seq SEQ, base BASE, carrying packet ID)
 *                                 straight to the receiver; PKTS as for data
 *   { "restart", "ISN" }          the sender restarts: all its state gone,
 *                                 numbering from ISN (frames on the link stay)
 *   { "carry", "M" }              a data frame of the other direction leaves
 *                                 the receiver's side now, carrying its
 *                                 waiting ack if one waits; M: p it reaches
 *                                 the sender, d it is lost
 *
 * Packets carry their number and a checksum, checked on delivery.
 */
#include <stdint.h>
#include <stdio.h>

#include "arq_frame.h"
#include "arq_rx.h"
#include "arq_tx.h"
#include <stdlib.h>
#include <string.h>

#include "check.h"

struct step {
	const char *op, *arg, *want;
};

#define MAXQ 512
#define END { NULL, NULL, NULL }

struct wire {
	uint8_t *buf[MAXQ];
	size_t len[MAXQ];
	int n;
};

struct harness {
	struct arq_tx tx;
	struct arq_rx rx;
	struct wire data, fb;
	uint64_t now;
	uint32_t next_pkt;
	uint32_t pkt_len;
	char delivered[2048];
	uint64_t rejected;
	const char *name;
};

static void wire_push(struct wire *w, const uint8_t *b, size_t len)
{
	if (w->n == MAXQ)
		return;
	w->buf[w->n] = malloc(len);
	memcpy(w->buf[w->n], b, len);
	w->len[w->n] = len;
	w->n++;
}

static void wire_clear(struct wire *w)
{
	for (int i = 0; i < w->n; i++)
		free(w->buf[i]);
	w->n = 0;
}

static uint32_t sum(const uint8_t *p, size_t len)
{
	return arq_crc32c(0, p, len);
}

/* packet: 4-byte number, filler, 4-byte checksum of the rest */
static void make_packet(uint8_t *p, uint32_t id, uint32_t len)
{
	uint32_t c, i;

	memcpy(p, &id, 4);
	for (i = 4; i < len - 4; i++)
		p[i] = (uint8_t)(id * 31 + i);
	c = sum(p, len - 4);
	memcpy(p + len - 4, &c, 4);
}

static void on_deliver(void *ctx, const uint8_t *pkt, size_t len)
{
	struct harness *h = ctx;
	uint32_t id, c;
	size_t n = strlen(h->delivered);

	CHECK(len >= 8, "%s: delivered %zu bytes", h->name, len);
	if (len < 8)
		return;
	memcpy(&id, pkt, 4);
	memcpy(&c, pkt + len - 4, 4);
	CHECK(c == sum(pkt, len - 4), "%s: packet %u corrupted on delivery", h->name, id);
	snprintf(h->delivered + n, sizeof(h->delivered) - n, "%s%u", n ? " " : "", id);
}

static void on_feedback(void *ctx, const struct arq_frame *f)
{
	struct harness *h = ctx;
	uint8_t buf[4096];
	size_t n = arq_frame_build(buf, sizeof(buf), f);

	CHECK(n > 0, "%s: feedback frame built", h->name);
	wire_push(&h->fb, buf, n);
}

static void tx_input(struct harness *h, const uint8_t *b, size_t len)
{
	struct arq_frame f;

	if (arq_frame_parse(b, len, &f) != ARQ_OK) {
		h->rejected++;
		return;
	}
	if (f.type == ARQ_DATA && f.flags & ARQ_F_ACK)
		arq_tx_on_carried_ack(&h->tx, f.ack_cum, h->now);
	else if (f.type == ARQ_ACK)
		arq_tx_on_ack(&h->tx, f.seq, f.aux, h->now);
	else if (f.type == ARQ_STATUS)
		arq_tx_on_status(&h->tx, f.seq, f.payload, f.len, h->now);
}

static void rx_input(struct harness *h, const uint8_t *b, size_t len)
{
	struct arq_frame f;

	if (arq_frame_parse(b, len, &f) != ARQ_OK) {
		h->rejected++;
		return;
	}
	if (f.type == ARQ_DATA)
		arq_rx_on_data(&h->rx, &f, h->now);
}

/* Apply a mask to a wire; frames marked s stay (in order) for later. */
static void run_wire(struct harness *h, struct wire *w, const char *mask, bool to_rx)
{
	struct wire keep = { .n = 0 };
	size_t masklen = strlen(mask);
	int i;

	for (i = 0; i < w->n; i++) {
		char m = (size_t)i < masklen ? mask[i] : 's';

		if (m == 'c')
			w->buf[i][w->len[i] - 1] ^= 0x40;
		if (m == 'p' || m == 'u' || m == 'c') {
			(to_rx ? rx_input : tx_input)(h, w->buf[i], w->len[i]);
			if (m == 'u')
				(to_rx ? rx_input : tx_input)(h, w->buf[i], w->len[i]);
		}
		if (m == 's') {
			keep.buf[keep.n] = w->buf[i];
			keep.len[keep.n++] = w->len[i];
		} else {
			free(w->buf[i]);
		}
	}
	*w = keep;
}

static uint64_t counter(struct harness *h, const char *name)
{
#define TXC(n, d) if (strcmp(name, "tx." #n) == 0) return h->tx.cnt.n;
#define RXC(n, d) if (strcmp(name, "rx." #n) == 0) return h->rx.cnt.n;
	ARQ_TX_COUNTERS(TXC)
	ARQ_RX_COUNTERS(RXC)
#undef TXC
#undef RXC
	if (strcmp(name, "rx.reorder_depth_max") == 0)
		return h->rx.cnt.reorder_depth_max;
	if (strcmp(name, "rx.reseq_held_max") == 0)
		return h->rx.cnt.reseq_held_max;
	if (strcmp(name, "link") == 0)
		return h->rejected;
	if (strcmp(name, "tx.outstanding") == 0)
		return arq_tx_outstanding(&h->tx);
	fprintf(stderr, "%s: no counter %s\n", h->name, name);
	tc_failures++;
	return 0;
}

static void check_delivered(struct harness *h, int line, const char *want)
{
	CHECK(strcmp(h->delivered, want ? want : "") == 0, "%s step %d: delivered \"%s\", want \"%s\"", h->name, line,
	      h->delivered, want ? want : "");
	h->delivered[0] = '\0';
}

static void run_timers(struct harness *h)
{
	uint64_t t = arq_tx_deadline(&h->tx);

	if (t && t <= h->now)
		arq_tx_on_timer(&h->tx, h->now);
	t = arq_rx_deadline(&h->rx);
	if (t && t <= h->now)
		arq_rx_on_timer(&h->rx, h->now);
}

struct setup {
	enum arq_feedback feedback;
	bool resequence, idle_repair, timer_restart;
	uint32_t window, max_rtx, frag_payload, pkt_len;
	uint64_t rx_buffer;	/* 0: 1 MiB */
	uint32_t ack_delay_ms;
};

static void run_table(const char *name, const struct setup *s, const struct step *steps)
{
	struct arq_tx_params tp = {
		.window = s->window ? s->window : 64,
		.max_rtx = s->max_rtx,
		.buffer_bytes = 1 << 20,
		.frag_payload = s->frag_payload,
		.max_payload = 1500,
		.rto_initial_ns = 100 * 1000000ULL,
		.rto_min_ns = 20 * 1000000ULL,
		.rto_max_ns = 1000 * 1000000ULL,
		.idle_repair = s->idle_repair,
		.timer_restart = s->timer_restart,
	};
	struct arq_rx_params rp = {
		.feedback = s->feedback,
		.resequence = s->resequence,
		.window = 128,
		.buffer_bytes = s->rx_buffer ? s->rx_buffer : 1 << 20,
		.reseq_timeout_ns = 300 * 1000000ULL,
		.status_interval_ns = 10 * 1000000ULL,
		.ack_delay_ns = s->ack_delay_ms * 1000000ULL,
		.status_max_bytes = 64,
		.reasm_slots = 4,
		.reasm_timeout_ns = 1000 * 1000000ULL,
	};
	static struct harness h;
	uint8_t pkt[2048];
	int i;

	memset(&h, 0, sizeof(h));
	h.name = name;
	h.now = 1000000000ULL;
	h.pkt_len = s->pkt_len ? s->pkt_len : 100;
	CHECK(arq_tx_init(&h.tx, &tp) == 0, "%s: tx init", name);
	CHECK(arq_rx_init(&h.rx, &rp, on_deliver, on_feedback, &h) == 0, "%s: rx init", name);
	for (i = 0; steps[i].op; i++) {
		const struct step *st = &steps[i];

		if (strcmp(st->op, "submit") == 0) {
			int n = atoi(st->arg);

			for (int k = 0; k < n; k++) {
				make_packet(pkt, h.next_pkt++, h.pkt_len);
				arq_tx_submit(&h.tx, pkt, h.pkt_len);
			}
		} else if (strcmp(st->op, "send") == 0) {
			char sent[512] = "";
			int n = atoi(st->arg);
			struct arq_frame f;
			uint8_t buf[2048];

			for (int k = 0; k < n && arq_tx_peek(&h.tx, &f); k++) {
				size_t len = arq_frame_build(buf, sizeof(buf), &f), l = strlen(sent);

				arq_tx_sent(&h.tx, h.now);
				wire_push(&h.data, buf, len);
				snprintf(sent + l, sizeof(sent) - l, "%s%u", l ? " " : "", f.seq);
			}
			CHECK(strcmp(sent, st->want ? st->want : "") == 0, "%s step %d: sent \"%s\", want \"%s\"", name,
			      i, sent, st->want ? st->want : "");
		} else if (strcmp(st->op, "data") == 0) {
			run_wire(&h, &h.data, st->arg, true);
			check_delivered(&h, i, st->want);
		} else if (strcmp(st->op, "feedback") == 0) {
			run_wire(&h, &h.fb, st->arg, false);
		} else if (strcmp(st->op, "tick") == 0) {
			uint64_t end = h.now + (uint64_t)atoi(st->arg) * 1000000ULL;

			/* 1 ms steps: timers fire at their time, as in the daemon */
			while (h.now < end) {
				h.now += 1000000ULL;
				run_timers(&h);
			}
			check_delivered(&h, i, st->want);
		} else if (strcmp(st->op, "forge") == 0) {
			unsigned long fseq, fbase, fid;
			struct arq_frame f = { .type = ARQ_DATA };
			uint8_t buf[2048];
			size_t len;

			CHECK(sscanf(st->arg, "%li %li %lu", &fseq, &fbase, &fid) == 3, "%s step %d: forge SEQ BASE ID", name, i);
			make_packet(pkt, (uint32_t)fid, h.pkt_len);
			f.seq = (uint32_t)fseq;
			f.aux = (uint32_t)fbase;
			f.payload = pkt;
			f.len = (uint16_t)h.pkt_len;
			len = arq_frame_build(buf, sizeof(buf), &f);
			rx_input(&h, buf, len);
			check_delivered(&h, i, st->want);
		} else if (strcmp(st->op, "carry") == 0) {
			/* the other direction's data: a packet of that side's own, with the ack riding on it */
			struct arq_frame f = { .type = ARQ_DATA, .seq = 1, .aux = 1, .payload = pkt, .len = 8 };
			uint8_t buf[64];
			size_t len;

			if (!arq_rx_ack_waiting(&h.rx, &f.ack_cum))
				continue;
			f.flags = ARQ_F_ACK;
			len = arq_frame_build(buf, sizeof(buf), &f);
			arq_rx_ack_carried(&h.rx);
			if (st->arg[0] == 'p')
				tx_input(&h, buf, len);
		} else if (strcmp(st->op, "restart") == 0) {
			arq_tx_free(&h.tx);
			tp.isn = (uint32_t)strtoul(st->arg, NULL, 0);
			CHECK(arq_tx_init(&h.tx, &tp) == 0, "%s: tx restart", name);
		} else if (strcmp(st->op, "count") == 0) {
			char spec[512], *tok, *save;

			snprintf(spec, sizeof(spec), "%s", st->arg);
			for (tok = strtok_r(spec, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
				char *eq = strchr(tok, '=');
				uint64_t got;

				*eq = '\0';
				got = counter(&h, tok);
				CHECK(got == strtoull(eq + 1, NULL, 10), "%s step %d: %s = %llu, want %s", name, i, tok,
				      (unsigned long long)got, eq + 1);
			}
		} else {
			fprintf(stderr, "%s: unknown step %s\n", name, st->op);
			tc_failures++;
		}
	}
	wire_clear(&h.data);
	wire_clear(&h.fb);
	arq_tx_free(&h.tx);
	arq_rx_free(&h.rx);
}

/* ---------------------------------------------------------------- Vaidya99: per-frame acks */

static const struct step ack_clean[] = {
	{ "submit", "3", NULL },
	{ "send", "10", "0 1 2" },
	{ "data", "ppp", "0 1 2" },
	{ "count", "rx.acks_sent=3 tx.acked=0 tx.outstanding=3", NULL },
	{ "feedback", "ppp", NULL },
	{ "count", "tx.acked=3 tx.outstanding=0 tx.retransmitted=0", NULL },
	{ "send", "10", "" },
	END,
};

/* A lost frame: found by the ack of a later one, retransmitted ahead of new data, delivered out of order. */
static const struct step ack_loss_later_ack[] = {
	{ "submit", "4", NULL },
	{ "send", "3", "0 1 2" },
	{ "data", "pdp", "0 2" },
	{ "feedback", "pp", NULL },
	{ "count", "tx.lost_by_ack=1 tx.acked=2", NULL },
	{ "send", "10", "1 3" },	/* the retransmission first, then new data */
	{ "data", "pp", "1 3" },
	{ "feedback", "pp", NULL },
	{ "count", "tx.retransmitted=1 tx.acked=4 tx.acked_after_rtx=1 tx.outstanding=0 rx.frames_out_of_order=1", NULL },
	{ "count", "rx.reorder_depth_max=1", NULL },
	END,
};

/* A retransmission is not declared lost again by acks of frames sent before it. */
static const struct step ack_no_double_rtx[] = {
	{ "submit", "4", NULL },
	{ "send", "4", "0 1 2 3" },
	{ "data", "dppp", "1 2 3" },
	{ "feedback", "p", NULL },	/* ack 1: 0 lost */
	{ "send", "1", "0" },
	{ "feedback", "pp", NULL },	/* acks 2, 3 were sent before the retransmission */
	{ "send", "1", "" },
	{ "count", "tx.retransmitted=1 tx.lost_by_ack=1", NULL },
	{ "data", "p", "0" },
	{ "feedback", "p", NULL },
	{ "count", "tx.outstanding=0", NULL },
	END,
};

/* The last frame lost: nothing later is acked, the timer finds it. */
static const struct step ack_loss_timer[] = {
	{ "submit", "2", NULL },
	{ "send", "2", "0 1" },
	{ "data", "pd", "0" },
	{ "feedback", "p", NULL },	/* an RTT sample of 0: the timeout is rto_min, 20 ms */
	{ "tick", "10", NULL },
	{ "send", "1", "" },
	{ "tick", "15", NULL },
	{ "count", "tx.lost_by_timer=1", NULL },
	{ "send", "1", "1" },
	{ "data", "p", "1" },
	{ "feedback", "p", NULL },
	{ "count", "tx.outstanding=0", NULL },
	END,
};

/*
 * A delay spike: the acks of frames 1 and 2 come 15 and 30 ms late while
 * the timeout is rto_min (20 ms).  Each frame's own timer fires on frame 2,
 * though acks kept coming (a needless repair had the link taken it)...
 */
static const struct step ack_spike_per_frame_timer[] = {
	{ "submit", "3", NULL },
	{ "send", "3", "0 1 2" },
	{ "data", "ppp", "0 1 2" },
	{ "feedback", "pss", NULL },
	{ "tick", "15", NULL },
	{ "feedback", "ps", NULL },
	{ "tick", "15", NULL },
	{ "count", "tx.lost_by_timer=1", NULL },
	{ "feedback", "p", NULL },
	{ "count", "tx.outstanding=0 tx.retransmitted=0", NULL },
	END,
};

/* ... with timer_restart the ack at 15 ms restarts it: nothing fires. */
static const struct step ack_spike_timer_restart[] = {
	{ "submit", "3", NULL },
	{ "send", "3", "0 1 2" },
	{ "data", "ppp", "0 1 2" },
	{ "feedback", "pss", NULL },
	{ "tick", "15", NULL },
	{ "feedback", "ps", NULL },
	{ "tick", "15", NULL },
	{ "count", "tx.lost_by_timer=0", NULL },
	{ "feedback", "p", NULL },
	{ "count", "tx.outstanding=0 tx.retransmitted=0", NULL },
	END,
};

/* timer_restart and a lost last frame: repaired one full timeout after the last ack (10 + 20 ms). */
static const struct step ack_tail_timer_restart[] = {
	{ "submit", "3", NULL },
	{ "send", "3", "0 1 2" },
	{ "data", "ppd", "0 1" },
	{ "feedback", "ps", NULL },
	{ "tick", "10", NULL },
	{ "feedback", "p", NULL },
	{ "tick", "19", NULL },
	{ "send", "1", "" },
	{ "tick", "1", NULL },
	{ "count", "tx.lost_by_timer=1", NULL },
	{ "send", "1", "2" },
	{ "data", "p", "2" },
	{ "feedback", "p", NULL },
	{ "count", "tx.outstanding=0 tx.retransmitted=1", NULL },
	END,
};

/* A lost ack: the frame is retransmitted, the receiver suppresses the duplicate and acks again. */
static const struct step ack_lost_ack[] = {
	{ "submit", "3", NULL },
	{ "send", "3", "0 1 2" },
	{ "data", "ppp", "0 1 2" },
	{ "feedback", "dpp", NULL },	/* the ack of 1 carries cum 2: 0 is covered */
	{ "count", "tx.outstanding=0 tx.retransmitted=0", NULL },
	{ "submit", "3", NULL },
	{ "send", "3", "3 4 5" },
	{ "data", "ppp", "3 4 5" },
	{ "feedback", "pdd", NULL },
	{ "tick", "200", NULL },
	{ "send", "5", "4 5" },
	{ "data", "pp", "" },
	{ "count", "rx.duplicates=2", NULL },
	{ "feedback", "pp", NULL },
	{ "count", "tx.outstanding=0", NULL },
	END,
};

/* Best effort: after max_rtx retransmissions the frame is given up; the link goes on. */
static const struct step ack_give_up[] = {
	{ "submit", "2", NULL },
	{ "send", "2", "0 1" },
	{ "data", "dp", "1" },
	{ "feedback", "p", NULL },
	{ "send", "1", "0" },
	{ "data", "d", "" },
	{ "tick", "150", NULL },
	{ "send", "1", "0" },
	{ "data", "d", "" },
	{ "tick", "400", NULL },
	{ "count", "tx.given_up=1 tx.retransmitted=2 tx.outstanding=0", NULL },
	{ "send", "1", "" },
	{ "submit", "1", NULL },
	{ "send", "1", "2" },
	{ "data", "p", "2" },	/* carries base 2: the receiver moves past 0 */
	{ "count", "rx.holes_skipped=1", NULL },
	END,
};

/* Duplicated and corrupted frames: duplicates suppressed, corrupt ones rejected and then recovered. */
static const struct step ack_dup_corrupt[] = {
	{ "submit", "3", NULL },
	{ "send", "3", "0 1 2" },
	{ "data", "ucp", "0 2" },
	{ "count", "rx.duplicates=1 link=1", NULL },
	{ "feedback", "pcp", NULL },	/* ack 0 twice (dup), ack 2's copy corrupt */
	{ "count", "link=2", NULL },
	{ "send", "5", "1" },
	{ "data", "p", "1" },
	{ "feedback", "p", NULL },
	{ "count", "tx.outstanding=0 rx.packets_delivered=3", NULL },
	END,
};

/* Reordering on the link: delivered at once in arrival order (non-sequencing). */
static const struct step ack_reorder_immediate[] = {
	{ "submit", "3", NULL },
	{ "send", "3", "0 1 2" },
	{ "data", "spp", "1 2" },
	{ "data", "p", "0" },
	{ "count", "rx.frames_out_of_order=1 rx.reorder_depth_max=2", NULL },
	END,
};

/* ---------------------------------------------------------------- resequencing */

static const struct step reseq_holds[] = {
	{ "submit", "4", NULL },
	{ "send", "4", "0 1 2 3" },
	{ "data", "pdpp", "0" },
	{ "count", "rx.resequenced=2 rx.reseq_held_max=2", NULL },
	{ "feedback", "ppp", NULL },
	{ "send", "1", "1" },
	{ "data", "p", "1 2 3" },
	END,
};

static const struct step reseq_timeout[] = {
	{ "submit", "3", NULL },
	{ "send", "3", "0 1 2" },
	{ "data", "dpp", "" },
	{ "feedback", "dd", NULL },	/* the sender never learns: its timer will resend */
	{ "tick", "90", "" },
	{ "send", "3", "" },
	{ "tick", "250", "1 2" },	/* reseq_timeout 300 ms after 1 arrived: hole 0 skipped */
	{ "count", "rx.holes_skipped=1", NULL },
	{ "send", "3", "0 1 2" },	/* the sender's timer (100 ms, backed off) */
	{ "data", "ppp", "" },	/* all late: below the window now */
	{ "count", "rx.duplicates=3", NULL },
	END,
};

/* A frame given up (N2 = 0): held frames behind it go up when the base moves past it. */
static const struct step reseq_given_up[] = {
	{ "submit", "3", NULL },
	{ "send", "3", "0 1 2" },
	{ "data", "dpp", "" },
	{ "count", "rx.resequenced=2", NULL },
	{ "feedback", "pp", NULL },	/* 0 lost, and max_rtx 0: given up at once */
	{ "count", "tx.given_up=1 tx.retransmitted=0 tx.outstanding=0", NULL },
	{ "submit", "1", NULL },
	{ "send", "1", "3" },	/* carries base 3 */
	{ "data", "p", "1 2 3" },
	{ "count", "rx.holes_skipped=1 rx.reseq_held_max=2", NULL },
	END,
};

/* ---------------------------------------------------------------- Wong/Leung: status frames */

static const struct step status_bitmap[] = {
	{ "submit", "5", NULL },
	{ "send", "5", "0 1 2 3 4" },
	{ "data", "pdpdp", "0 2 4" },
	{ "count", "rx.status_sent=0", NULL },
	{ "tick", "1", NULL },	/* a new hole: status at once */
	{ "count", "rx.status_sent=1 rx.acks_sent=0", NULL },
	{ "feedback", "p", NULL },
	{ "count", "tx.acked=3 tx.lost_by_ack=2", NULL },
	{ "send", "5", "1 3" },
	{ "data", "pp", "1 3" },
	{ "tick", "10", NULL },
	{ "feedback", "ps", NULL },
	{ "count", "tx.outstanding=0", NULL },
	END,
};

/* Status frames lost: repeated every interval while a hole is open. */
static const struct step status_lost[] = {
	{ "submit", "3", NULL },
	{ "send", "3", "0 1 2" },
	{ "data", "dpp", "1 2" },
	{ "tick", "1", NULL },
	{ "feedback", "d", NULL },
	{ "tick", "10", NULL },
	{ "feedback", "p", NULL },
	{ "send", "3", "0" },
	{ "data", "p", "0" },
	{ "tick", "10", NULL },
	{ "feedback", "p", NULL },
	{ "count", "tx.outstanding=0 tx.retransmitted=1", NULL },
	{ "tick", "50", NULL },
	{ "count", "rx.status_sent=3", NULL },	/* quiet once nothing is missing */
	END,
};

/*
 * The last frame of a burst lost: nothing later can reveal it.  Two RTT
 * samples of 10 ms (the status interval) make srtt 10 ms, rttvar 3.75 ms,
 * the full timeout 25 ms; with idle_repair the idle link repairs after
 * srtt + rttvar = 13.75 ms.
 */
static const struct step status_tail_idle_repair[] = {
	{ "submit", "3", NULL },
	{ "send", "3", "0 1 2" },
	{ "data", "ppd", "0 1" },
	{ "tick", "10", NULL },
	{ "feedback", "p", NULL },
	{ "count", "tx.acked=2", NULL },
	{ "tick", "3", NULL },
	{ "send", "1", "" },
	{ "tick", "1", NULL },
	{ "count", "tx.lost_by_timer=1 tx.lost_by_idle_timer=1", NULL },
	{ "send", "1", "2" },
	{ "data", "p", "2" },
	{ "tick", "10", NULL },
	{ "feedback", "p", NULL },
	{ "count", "tx.outstanding=0 tx.retransmitted=1", NULL },
	END,
};

/* The same without idle_repair: the full timeout. */
static const struct step status_tail_full_timeout[] = {
	{ "submit", "3", NULL },
	{ "send", "3", "0 1 2" },
	{ "data", "ppd", "0 1" },
	{ "tick", "10", NULL },
	{ "feedback", "p", NULL },
	{ "tick", "14", NULL },
	{ "send", "1", "" },
	{ "tick", "1", NULL },
	{ "count", "tx.lost_by_timer=1 tx.lost_by_idle_timer=0", NULL },
	{ "send", "1", "2" },
	END,
};

/* New data waiting: the link is not idle, so the full timeout holds and new data goes first. */
static const struct step status_busy_full_timeout[] = {
	{ "submit", "4", NULL },
	{ "send", "3", "0 1 2" },
	{ "data", "ppd", "0 1" },
	{ "tick", "10", NULL },
	{ "feedback", "p", NULL },
	{ "tick", "4", NULL },
	{ "count", "tx.lost_by_timer=0", NULL },
	{ "send", "1", "3" },
	END,
};

/*
 * Backoff only while the peer is silent.  The first repair follows a
 * status frame heard after the frame went out: a loss on a live link, no
 * backoff, so the second repair waits 13.75 ms again.  Nothing is heard
 * after that one: the third waits twice as long (27.5 ms), as the full
 * timeout would, because the peer may be gone.
 */
static const struct step status_idle_repair_backoff[] = {
	{ "submit", "3", NULL },
	{ "send", "3", "0 1 2" },
	{ "data", "ppd", "0 1" },
	{ "tick", "10", NULL },
	{ "feedback", "p", NULL },
	{ "tick", "4", NULL },
	{ "send", "1", "2" },	/* t = 14 */
	{ "data", "d", NULL },
	{ "tick", "13", NULL },
	{ "send", "1", "" },	/* t = 27 */
	{ "tick", "1", NULL },
	{ "send", "1", "2" },	/* t = 28: 13.75 ms after the first repair */
	{ "data", "d", NULL },
	{ "tick", "27", NULL },
	{ "send", "1", "" },	/* t = 55 */
	{ "tick", "1", NULL },
	{ "send", "1", "2" },	/* t = 56: 27.5 ms after the second */
	{ "count", "tx.lost_by_idle_timer=3 tx.retransmitted=3", NULL },
	END,
};

/* ---------------------------------------------------------------- fragmentation */

static const struct step frag_basic[] = {
	{ "submit", "1", NULL },	/* 300 bytes at 128 per frame: 3 fragments */
	{ "send", "5", "0 1 2" },
	{ "data", "pdp", "" },
	{ "feedback", "pp", NULL },
	{ "send", "5", "1" },
	{ "data", "p", "0" },
	{ "count", "tx.fragmented_packets=1 rx.reassembled=1", NULL },
	END,
};

static const struct step frag_given_up[] = {
	{ "submit", "2", NULL },
	{ "send", "6", "0 1 2 3 4 5" },
	{ "data", "pdpppp", "1" },
	{ "feedback", "ppppp", NULL },
	{ "send", "1", "1" },	/* max_rtx 1 */
	{ "data", "d", "" },
	{ "tick", "200", NULL },
	{ "count", "tx.given_up=1", NULL },
	{ "submit", "1", NULL },
	{ "send", "3", "6 7 8" },
	{ "data", "ppp", "2" },	/* base 6: packet 0 can never complete */
	{ "count", "rx.reassembly_dropped=1 rx.reassembled=2", NULL },
	END,
};

/* RLP feedback with fragments: a lost fragment is found from the bitmap and the packet completes. */
static const struct step status_frag[] = {
	{ "submit", "2", NULL },
	{ "send", "6", "0 1 2 3 4 5" },
	{ "data", "ppdppp", "1" },
	{ "tick", "1", NULL },
	{ "feedback", "p", NULL },
	{ "count", "tx.lost_by_ack=1 tx.acked=5", NULL },
	{ "send", "6", "2" },
	{ "data", "p", "0" },
	{ "tick", "10", NULL },
	{ "feedback", "pp", NULL },
	{ "count", "tx.outstanding=0 rx.reassembled=2 rx.reassembly_dropped=0", NULL },
	END,
};

/* ---------------------------------------------------------------- bounds */

static const struct step window_full[] = {
	{ "submit", "6", NULL },	/* window 4 */
	{ "count", "tx.buffer_full_drops=2 tx.frames_queued=4", NULL },
	{ "send", "9", "0 1 2 3" },
	{ "data", "pppp", "0 1 2 3" },
	{ "feedback", "pppp", NULL },
	{ "submit", "1", NULL },
	{ "send", "9", "4" },
	END,
};

static const struct setup ACK = { .feedback = ARQ_FEEDBACK_ACK, .max_rtx = 4 };
static const struct setup ACK_RESTART = { .feedback = ARQ_FEEDBACK_ACK, .max_rtx = 4, .timer_restart = true };
static const struct setup ACK_DELAY = { .feedback = ARQ_FEEDBACK_ACK, .max_rtx = 4, .ack_delay_ms = 10 };
static const struct setup ACK_N2 = { .feedback = ARQ_FEEDBACK_ACK, .max_rtx = 2 };
static const struct setup RESEQ = { .feedback = ARQ_FEEDBACK_ACK, .resequence = true, .max_rtx = 4 };
static const struct setup STATUS = { .feedback = ARQ_FEEDBACK_STATUS, .max_rtx = 4 };
static const struct setup STATUS_IDLE = { .feedback = ARQ_FEEDBACK_STATUS, .max_rtx = 4, .idle_repair = true };
static const struct setup FRAG = { .feedback = ARQ_FEEDBACK_ACK, .max_rtx = 4, .frag_payload = 128, .pkt_len = 300 };
static const struct setup FRAG_N1 = { .feedback = ARQ_FEEDBACK_ACK, .max_rtx = 1, .frag_payload = 128, .pkt_len = 300 };
static const struct setup RESEQ_N0 = { .feedback = ARQ_FEEDBACK_ACK, .resequence = true, .max_rtx = 0 };
static const struct setup STATUS_FRAG = { .feedback = ARQ_FEEDBACK_STATUS, .max_rtx = 4, .frag_payload = 128,
					  .pkt_len = 300 };
static const struct setup SMALL = { .feedback = ARQ_FEEDBACK_ACK, .max_rtx = 4, .window = 4 };
static const struct setup FRAG_BUF = { .feedback = ARQ_FEEDBACK_ACK, .max_rtx = 4, .frag_payload = 128, .pkt_len = 300,
				       .rx_buffer = 200 };
static const struct setup RESEQ_BUF = { .feedback = ARQ_FEEDBACK_ACK, .resequence = true, .max_rtx = 4, .rx_buffer = 250 };


/* ---------------------------------------------------------------- stale and forged frames */

/*
 * One forged frame, its base far above the window (a skip over every frame
 * in between) or far below it (a "restart"), moves nothing; the link goes on.
 */
static const struct step forged_frame_moves_nothing[] = {
	{ "submit", "3", NULL },
	{ "send", "10", "0 1 2" },
	{ "data", "ppp", "0 1 2" },
	{ "feedback", "ppp", NULL },
	{ "forge", "100000 99990 900", "" },
	{ "forge", "3000000000 2999999999 901", "" },
	{ "count", "rx.out_of_step=2 rx.resyncs=0 rx.holes_skipped=0 rx.acks_sent=3", NULL },
	{ "submit", "2", NULL },
	{ "send", "10", "3 4" },
	{ "data", "pp", "3 4" },
	{ "feedback", "pp", NULL },
	{ "count", "rx.duplicates=0 tx.outstanding=0", NULL },
	END,
};

/* A frame claiming more than a window above its own base is a lie: dropped before it moves anything. */
static const struct step forged_inconsistent[] = {
	{ "submit", "3", NULL },
	{ "send", "10", "0 1 2" },
	{ "data", "ppp", "0 1 2" },
	{ "forge", "200 10 900", "" },	/* 190 above its base, the window is 128 */
	{ "count", "rx.inconsistent=1 rx.holes_skipped=0 rx.out_of_window=0", NULL },
	{ "submit", "1", NULL },
	{ "send", "1", "3" },
	{ "data", "p", "3" },
	END,
};

/* Forged frames between the sender's own never add up to a resync, nor does one frame repeated. */
static const struct step forged_frames_interleaved[] = {
	{ "submit", "2", NULL },
	{ "send", "2", "0 1" },
	{ "data", "pp", "0 1" },
	{ "forge", "500000 499999 900", "" },
	{ "forge", "500001 499999 901", "" },
	{ "submit", "1", NULL },
	{ "send", "1", "2" },
	{ "data", "p", "2" },	/* the sender we know, in step: the evidence is void */
	{ "forge", "500002 499999 902", "" },
	{ "forge", "500003 499999 903", "" },
	{ "submit", "1", NULL },
	{ "send", "1", "3" },
	{ "data", "p", "3" },
	{ "forge", "500004 499999 904", "" },
	{ "forge", "500004 499999 904", "" },
	{ "forge", "500004 499999 904", "" },	/* one frame three times is one piece of evidence */
	{ "count", "rx.out_of_step=7 rx.resyncs=0", NULL },
	END,
};

/* The sender restarts elsewhere in sequence space: its third frame confirms it, the first two come again. */
static const struct step restart_resyncs[] = {
	{ "submit", "3", NULL },
	{ "send", "10", "0 1 2" },
	{ "data", "ppp", "0 1 2" },
	{ "feedback", "ppp", NULL },
	{ "restart", "0x80000000", NULL },
	{ "submit", "4", NULL },
	{ "send", "10", "2147483648 2147483649 2147483650 2147483651" },
	{ "data", "pppp", "5 6" },
	{ "count", "rx.out_of_step=2 rx.resyncs=1 rx.acks_sent=5", NULL },
	{ "feedback", "pp", NULL },	/* acks of the last two: the first two were lost */
	{ "send", "10", "2147483648 2147483649" },
	{ "data", "pp", "3 4" },
	{ "feedback", "pp", NULL },
	{ "count", "tx.outstanding=0 tx.lost_by_ack=2", NULL },
	END,
};

/* A frame of the old sender, late on the link after the restart was confirmed: dropped, no second reset. */
static const struct step stale_frame_after_restart[] = {
	{ "submit", "3", NULL },
	{ "send", "10", "0 1 2" },
	{ "data", "pps", "0 1" },	/* frame 2 stays on the link */
	{ "restart", "1000000", NULL },
	{ "submit", "3", NULL },
	{ "send", "10", "1000000 1000001 1000002" },
	{ "data", "sppp", "5" },
	{ "count", "rx.resyncs=1 rx.out_of_step=2", NULL },
	{ "data", "p", "" },	/* the stale frame */
	{ "count", "rx.resyncs=1 rx.out_of_step=3", NULL },
	{ "feedback", "ppp", NULL },	/* the old sender's two acks are stale to the new one */
	{ "send", "10", "1000000 1000001" },
	{ "data", "pp", "3 4" },
	END,
};

/* rx_buffer bounds reassembly: fragments beyond it wait at the sender, one that completes a packet gets in. */
static const struct step reasm_buffer_bound[] = {
	{ "submit", "2", NULL },	/* 300 bytes in 128 + 128 + 44; rx_buffer 200 */
	{ "send", "10", "0 1 2 3 4 5" },
	{ "data", "pdpppp", "" },	/* 0 and 2 held (172 bytes); 3, 4, 5 do not fit */
	{ "count", "rx.reasm_buffer_full=3 rx.acks_sent=2", NULL },
	{ "feedback", "pp", NULL },
	{ "send", "10", "1" },
	{ "data", "p", "0" },	/* completes packet 0: taken although the buffer is full */
	{ "count", "rx.reasm_buffer_full=3 rx.reassembled=1", NULL },
	{ "feedback", "p", NULL },
	{ "tick", "150", NULL },	/* the sender's timer: 3, 4, 5 again */
	{ "send", "10", "3 4 5" },
	{ "data", "ppp", "" },	/* 3 and 5 fit (172 bytes), 4 does not */
	{ "count", "rx.reasm_buffer_full=4", NULL },
	{ "feedback", "pp", NULL },
	{ "tick", "300", NULL },	/* acks of frames sent once say nothing of 4's retransmission: its timer */
	{ "send", "10", "4" },
	{ "data", "p", "1" },	/* the last one completes it */
	{ "count", "rx.reassembled=2 rx.reassembly_dropped=0", NULL },
	END,
};

/* rx_buffer bounds resequencing: a frame that does not fit is dropped unacknowledged and comes again. */
static const struct step reseq_buffer_bound[] = {
	{ "submit", "4", NULL },	/* 100 bytes each; rx_buffer 250 */
	{ "send", "4", "0 1 2 3" },
	{ "data", "dppp", "" },
	{ "count", "rx.buffer_full_drops=1 rx.resequenced=2 rx.acks_sent=2", NULL },
	{ "feedback", "pp", NULL },
	{ "send", "1", "0" },
	{ "data", "p", "0 1 2" },
	{ "feedback", "p", NULL },
	{ "tick", "150", NULL },
	{ "send", "10", "3" },
	{ "data", "p", "3" },
	END,
};

/* ---------------------------------------------------------------- ack_delay: acks carried in data */

/* In order: every ack waits, one cum carried in the other direction's data acknowledges them all. */
static const struct step ack_delay_carried[] = {
	{ "submit", "3", NULL },
	{ "send", "10", "0 1 2" },
	{ "data", "ppp", "0 1 2" },
	{ "count", "rx.acks_sent=0 rx.acks_deferred=3 tx.acked=0", NULL },
	{ "carry", "p", NULL },
	{ "count", "rx.acks_carried=1 tx.acked=3 tx.outstanding=0 tx.stale_feedback=0", NULL },
	{ "carry", "p", NULL },	/* nothing waits: nothing carried */
	{ "count", "rx.acks_carried=1", NULL },
	END,
};

/* Nothing goes back: the ack leaves on its own once ack_delay (10 ms) is up, one for both frames. */
static const struct step ack_delay_timer[] = {
	{ "submit", "2", NULL },
	{ "send", "10", "0 1" },
	{ "data", "pp", "0 1" },
	{ "tick", "9", NULL },
	{ "count", "rx.acks_sent=0", NULL },
	{ "tick", "1", NULL },
	{ "count", "rx.acks_sent=1", NULL },
	{ "feedback", "p", NULL },
	{ "count", "tx.acked=2 tx.outstanding=0 tx.retransmitted=0", NULL },
	END,
};

/* A hole: frames above it are acknowledged at once (the loss is found as without ack_delay), the
 * waiting ack of the frame below goes with them; the repair closes the hole and waits again. */
static const struct step ack_delay_hole[] = {
	{ "submit", "4", NULL },
	{ "send", "4", "0 1 2 3" },
	{ "data", "pdpp", "0 2 3" },
	{ "count", "rx.acks_deferred=1 rx.acks_sent=2", NULL },
	{ "feedback", "pp", NULL },
	{ "count", "tx.lost_by_ack=1 tx.acked=3", NULL },
	{ "send", "4", "1" },
	{ "data", "p", "1" },
	{ "count", "rx.acks_deferred=2 rx.acks_sent=2", NULL },
	{ "carry", "p", NULL },
	{ "count", "tx.outstanding=0 tx.retransmitted=1", NULL },
	END,
};

/* The frame that carried the ack is lost: the sender's timer repeats the frames, the receiver
 * answers the duplicates at once. */
static const struct step ack_delay_carrier_lost[] = {
	{ "submit", "2", NULL },
	{ "send", "2", "0 1" },
	{ "data", "pp", "0 1" },
	{ "carry", "d", NULL },
	{ "tick", "200", NULL },
	{ "count", "rx.acks_sent=0 tx.lost_by_timer=2", NULL },
	{ "send", "4", "0 1" },
	{ "data", "pp", "" },
	{ "count", "rx.duplicates=2 rx.acks_sent=2", NULL },
	{ "feedback", "pp", NULL },
	{ "count", "tx.outstanding=0", NULL },
	END,
};

/* ---------------------------------------------------------------- the codec */

static void codec(void)
{
	uint8_t buf[256], payload[40];
	struct arq_frame f = { .type = ARQ_DATA, .flags = ARQ_F_FRAG, .seq = 0xfffffffe, .aux = 7, .pkt_id = 513,
			       .frag_index = 2, .frag_count = 3, .payload = payload, .len = sizeof(payload) };
	struct arq_frame g;
	size_t n;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)i;
	n = arq_frame_build(buf, sizeof(buf), &f);
	CHECK(n == ARQ_HDR_LEN + ARQ_FRAG_HDR_LEN + sizeof(payload), "size %zu", n);
	CHECK(arq_frame_parse(buf, n, &g) == ARQ_OK, "round trip");
	CHECK(g.seq == f.seq && g.aux == 7 && g.pkt_id == 513 && g.frag_index == 2 && g.frag_count == 3 &&
	      g.len == sizeof(payload) && memcmp(g.payload, payload, sizeof(payload)) == 0, "fields");
	CHECK(arq_frame_parse(buf, 10, &g) == ARQ_ERR_SHORT, "short");
	CHECK(arq_frame_parse(buf, n - 1, &g) == ARQ_ERR_LENGTH, "truncated");
	CHECK(arq_frame_parse(buf, n + 1, &g) == ARQ_ERR_LENGTH, "trailing bytes on a long frame");
	for (size_t i = 0; i < n; i++) {
		enum arq_parse_result r;

		buf[i] ^= 0x01;
		r = arq_frame_parse(buf, n, &g);
		CHECK(r != ARQ_OK, "bit flip at %zu accepted", i);
		buf[i] ^= 0x01;
	}
	buf[0] = 0x21;
	CHECK(arq_frame_parse(buf, n, &g) == ARQ_ERR_VERSION, "version");
	buf[0] = 0x17;
	CHECK(arq_frame_parse(buf, n, &g) == ARQ_ERR_TYPE, "type");
	/* an ack is padded by a real Ethernet to 46 bytes: accepted */
	{
		struct arq_frame a = { .type = ARQ_ACK, .seq = 5, .aux = 3 };

		memset(buf, 0, sizeof(buf));
		n = arq_frame_build(buf, sizeof(buf), &a);
		CHECK(n == ARQ_HDR_LEN, "ack size");
		CHECK(arq_frame_parse(buf, 46, &g) == ARQ_OK && g.type == ARQ_ACK && g.seq == 5 && g.aux == 3, "padded ack");
	}
	/* a fragment count of 1 or an index past the count is a lie */
	f.frag_count = 1;
	f.frag_index = 0;
	n = arq_frame_build(buf, sizeof(buf), &f);
	CHECK(arq_frame_parse(buf, n, &g) == ARQ_ERR_FIELD, "fragment count 1");
	CHECK(arq_frame_build(buf, 10, &f) == 0, "build refuses a small buffer");
	/* a data frame with nothing in it: the sender never sends one (fuzz_arq_frame found it delivered) */
	{
		struct arq_frame e = { .type = ARQ_DATA, .seq = 1, .aux = 1 };

		n = arq_frame_build(buf, sizeof(buf), &e);
		CHECK(n == ARQ_HDR_LEN && arq_frame_parse(buf, n, &g) == ARQ_ERR_FIELD, "empty data frame");
	}
	/* a carried ack sits between the header and the fragment header; on anything but data it is refused */
	{
		struct arq_frame c = f;

		c.flags = ARQ_F_FRAG | ARQ_F_ACK;
		c.frag_count = 3;
		c.frag_index = 1;
		c.ack_cum = 0x01020304;
		n = arq_frame_build(buf, sizeof(buf), &c);
		CHECK(n == ARQ_HDR_LEN + ARQ_ACK_FIELD_LEN + ARQ_FRAG_HDR_LEN + sizeof(payload), "carried size %zu", n);
		CHECK(arq_frame_parse(buf, n, &g) == ARQ_OK && g.ack_cum == 0x01020304 && g.pkt_id == 513 &&
		      g.frag_index == 1 && memcmp(g.payload, payload, sizeof(payload)) == 0, "carried ack round trip");
		c.flags = ARQ_F_ACK;
		n = arq_frame_build(buf, sizeof(buf), &c);
		CHECK(arq_frame_parse(buf, n, &g) == ARQ_OK && g.ack_cum == 0x01020304 && g.frag_count == 0 &&
		      memcmp(g.payload, payload, sizeof(payload)) == 0, "carried ack, whole packet");
		c = (struct arq_frame){ .type = ARQ_ACK, .flags = ARQ_F_ACK, .seq = 5, .aux = 3 };
		n = arq_frame_build(buf, sizeof(buf), &c);
		CHECK(arq_frame_parse(buf, n, &g) == ARQ_ERR_FLAGS, "carried ack on an ack frame");
		buf[1] = 0x04;
		CHECK(arq_frame_parse(buf, n, &g) == ARQ_ERR_FLAGS, "unknown flag");
	}
	CHECK(strcmp(arq_parse_result_name(ARQ_ERR_CRC), "crc") == 0, "names");
	/* the pacer's unit: Wong/Leung's 128-byte frames on a 1516-byte veth */
	CHECK(arq_frame_max(128, 1516) == 128, "fragmenting");
	CHECK(arq_frame_max(0, 1516) == 1516, "not fragmenting");
	CHECK(arq_frame_max(9000, 1516) == 1516, "link_mtu above the interface's");
}

/* Sequence numbers wrap: a run across 2^32. */
static void wraparound(void)
{
	struct arq_tx_params tp = { .window = 8, .max_rtx = 3, .buffer_bytes = 1 << 20, .max_payload = 1500,
				    .rto_initial_ns = 100000000ULL, .rto_min_ns = 1000000ULL, .rto_max_ns = 1000000000ULL };
	struct arq_tx tx;
	struct arq_frame f;
	uint8_t pkt[64] = { 0 };
	uint32_t i, sent = 0;

	CHECK(arq_tx_init(&tx, &tp) == 0, "init");
	tx.base = tx.next_seq = tx.next_new = 0xfffffffcu;
	for (i = 0; i < 8; i++)
		arq_tx_submit(&tx, pkt, sizeof(pkt));
	while (arq_tx_peek(&tx, &f)) {
		arq_tx_sent(&tx, 1000);
		sent++;
	}
	CHECK(sent == 8, "sent %u", sent);
	arq_tx_on_ack(&tx, 2, 0xfffffffeu, 2000);	/* cum below, seq 2 past the wrap: 0xfffffffe.. lost */
	CHECK(tx.cnt.acked == 3 && tx.cnt.lost_by_ack == 4, "acked %llu lost %llu", (unsigned long long)tx.cnt.acked,
	      (unsigned long long)tx.cnt.lost_by_ack);
	arq_tx_free(&tx);
}

int main(void)
{
	codec();
	wraparound();
	run_table("ack_clean", &ACK, ack_clean);
	run_table("ack_loss_later_ack", &ACK, ack_loss_later_ack);
	run_table("ack_no_double_rtx", &ACK, ack_no_double_rtx);
	run_table("ack_loss_timer", &ACK, ack_loss_timer);
	run_table("ack_spike_per_frame_timer", &ACK, ack_spike_per_frame_timer);
	run_table("ack_spike_timer_restart", &ACK_RESTART, ack_spike_timer_restart);
	run_table("ack_tail_timer_restart", &ACK_RESTART, ack_tail_timer_restart);
	run_table("ack_loss_later_ack_restart", &ACK_RESTART, ack_loss_later_ack);
	run_table("ack_lost_ack", &ACK, ack_lost_ack);
	run_table("ack_give_up", &ACK_N2, ack_give_up);
	run_table("ack_dup_corrupt", &ACK, ack_dup_corrupt);
	run_table("ack_reorder_immediate", &ACK, ack_reorder_immediate);
	run_table("ack_delay_carried", &ACK_DELAY, ack_delay_carried);
	run_table("ack_delay_timer", &ACK_DELAY, ack_delay_timer);
	run_table("ack_delay_hole", &ACK_DELAY, ack_delay_hole);
	run_table("ack_delay_carrier_lost", &ACK_DELAY, ack_delay_carrier_lost);
	run_table("reseq_holds", &RESEQ, reseq_holds);
	run_table("reseq_timeout", &RESEQ, reseq_timeout);
	run_table("reseq_given_up", &RESEQ_N0, reseq_given_up);
	run_table("status_bitmap", &STATUS, status_bitmap);
	run_table("status_frag", &STATUS_FRAG, status_frag);
	run_table("status_lost", &STATUS, status_lost);
	run_table("status_tail_idle_repair", &STATUS_IDLE, status_tail_idle_repair);
	run_table("status_tail_full_timeout", &STATUS, status_tail_full_timeout);
	run_table("status_busy_full_timeout", &STATUS_IDLE, status_busy_full_timeout);
	run_table("status_idle_repair_backoff", &STATUS_IDLE, status_idle_repair_backoff);
	run_table("frag_basic", &FRAG, frag_basic);
	run_table("frag_given_up", &FRAG_N1, frag_given_up);
	run_table("window_full", &SMALL, window_full);
	run_table("forged_frame_moves_nothing", &ACK, forged_frame_moves_nothing);
	run_table("forged_inconsistent", &ACK, forged_inconsistent);
	run_table("forged_frames_interleaved", &ACK, forged_frames_interleaved);
	run_table("restart_resyncs", &ACK, restart_resyncs);
	run_table("stale_frame_after_restart", &ACK, stale_frame_after_restart);
	run_table("reasm_buffer_bound", &FRAG_BUF, reasm_buffer_bound);
	run_table("reseq_buffer_bound", &RESEQ_BUF, reseq_buffer_bound);
	return tc_report("test_arq");
}
