// SPDX-License-Identifier: GPL-2.0-only
/*
 * Snoop (Balakrishnan et al., 1995; Vaidya et al. 1999 section 4) as a
 * pure state machine.
 *
 * Towards the wireless host (data from the fixed host):
 *   new segment           cache a copy, forward it
 *   sender retransmission of data the wireless host already acknowledged:
 *                         drop it; answer with an ACK for the last ACK seen,
 *                         in the wireless host's name (the sender retransmits
 *                         because an ACK was lost on the wired side, or it
 *                         timed out early), rate-limited
 *   other sender retransmission
 *                         forward it, mark the cached segment as the
 *                         sender's: its dupacks now go to the sender, which
 *                         counts them
 *
 * From the wireless host (ACKs):
 *   new ACK               free acknowledged segments, take an RTT sample
 *                         from the one sent last (none if it was
 *                         retransmitted: Karn), look for further holes,
 *                         forward
 *   duplicate ACK         if the hole is cached: retransmit it locally
 *                         (rtx_thresh dupacks, 1 + c copies) and drop the
 *                         dupack; if not, forward it: the sender must recover
 *   older ACK             drop (reordered on the uplink; carries nothing new)
 *
 * Timer: a local retransmission timeout from a smoothed RTT of the wireless
 * hop (RFC 6298 estimator over the base station <-> wireless host loop,
 * queueing included), exponential backoff, max_local_rtx rounds per
 * segment; after that the segment is left to the sender (its dupacks pass).
 *
 * Loss inference.  Every transmission towards the wireless host gets an
 * ordinal.  The hop is a FIFO, so when a transmission is known to have
 * arrived, every earlier transmission has either arrived or is lost.  A
 * cached segment is deemed lost when a transmission at least rtx_thresh
 * ordinals later has arrived.  What is known to have arrived:
 *   - with SACK: every segment cumulatively acknowledged or covered by a SACK
 *     block (exact; DSACK blocks report duplicates and are not evidence);
 *   - without SACK: cumulatively acknowledged segments whose copy is known
 *     (an original, or the sender's retransmission of a segment that never
 *     left this box); a dupack does not say which transmission arrived.
 *     The first round follows the paper: rtx_thresh duplicate ACKs
 *     (RFC 5681's: pure, same ACK, same window; a window update may be the
 *     application reading, not an arrival).  At a partial ACK, also the
 *     dupacks counted for the old hole beyond the segments now acknowledged
 *     (arrivals above the new hole: NewReno's inference, done here, and on
 *     the safe side: some of those segments may have arrived earlier).  A
 *     lost local retransmission is the timer's.
 * An ACK for a segment sent more than once is ambiguous (Karn): which copy
 * arrived?  When the latest round was triggered by such evidence, every
 * earlier copy was already proven lost (FIFO), so the ACK credits the
 * latest round; after a timer round (no evidence: the original may only be
 * late, e.g. behind a long queue) it credits the original.
 * This finds the second hole of a window at the partial ACK that ends the
 * first, and a lost local retransmission as soon as anything sent after it
 * arrives, without waiting for the timer.  Without SACK only the hole at the
 * cumulative ACK can be inferred (nothing is known about segments above it).
 * The first round also follows the paper's rule: rtx_thresh dupacks.
 *
 * The rest of Snoop, one concern a file: congestion signals
 * (filter_snoop_congestion.c), pacing the sender through the window field
 * (filter_snoop_pacing.c) and SACK towards the sender (filter_snoop_sack.c).
 */
#include <string.h>

#include "build.h"
#include "filter_snoop.h"
#include "flow.h"
#include "json.h"
#include "seq.h"

#define RTTVAR_FLOOR_NS (1 * NS_PER_MS)	/* keep rto above srtt when the hop is perfectly steady */

uint64_t snoop_rto(const struct snoop_state *s, const struct pep_config *cfg)
{
	uint64_t rto, var;

	if (s->rtt_valid) {
		var = 4 * s->rttvar_ns;
		rto = s->srtt_ns + (var > RTTVAR_FLOOR_NS ? var : RTTVAR_FLOOR_NS);
	} else if (s->handshake_rtt_ns) {
		rto = 3 * s->handshake_rtt_ns;	/* RFC 6298 after a first sample R: R + 4 R/2 */
	} else {
		rto = cfg->rto_initial_ns;
	}
	if (rto < cfg->rto_min_ns)
		rto = cfg->rto_min_ns;
	rto <<= s->backoff;
	if (rto > cfg->rto_max_ns)
		rto = cfg->rto_max_ns;
	return rto;
}

/*
 * A minimum older than SNOOP_MIN_RTT_WINDOW_NS gives way to a higher sample
 * only if that sample's segment left with the hop clear of the flow's own
 * queue (clear).  Taking any sample let the standing queue the window
 * clamp allows become the minimum, the clamp grow by it, the queue with
 * it, and so on every window: on an 802.11b hop of 4.5 ms a CUBIC flow's
 * minimum reached 38-43 ms in 20 s (72-82 ms with the clamp at 200 %).
 */
static void rtt_sample(struct flow *f, uint64_t r, bool clear, const struct pep_ctx *ctx)
{
	struct snoop_state *s = &f->st.snoop;
	uint64_t err, now = ctx->now, hop_min, window = clear ? SNOOP_MIN_RTT_WINDOW_NS : UINT64_MAX;

	s->last_rtt_ns = r;
	if (!s->min_rtt_ns || r <= s->min_rtt_ns || now - s->min_rtt_stamp > window) {
		if (s->min_rtt_ns && r > s->min_rtt_ns)
			COUNT(ctx, f, min_rtt_renewed, 1);
		s->min_rtt_ns = r;
		s->min_rtt_stamp = now;
	}
	if (ctx->cfg->share_hop_rtt && ctx->hops) {
		/* the hop's minimum, as every flow to this wireless host saw it (hop.h) */
		hop_min = hop_rtt_sample(ctx->hops, f->key.family, f->key.wh, r, now, window);
		if (hop_min && hop_min < s->min_rtt_ns) {
			s->min_rtt_ns = hop_min;
			COUNT(ctx, f, min_rtt_from_hop, 1);
		}
	}
	if (!s->rtt_valid) {
		s->srtt_ns = r;
		s->rttvar_ns = r / 2;
		s->rtt_valid = true;
		return;
	}
	err = s->srtt_ns > r ? s->srtt_ns - r : r - s->srtt_ns;
	s->rttvar_ns = s->rttvar_ns - s->rttvar_ns / 4 + err / 4;
	s->srtt_ns = s->srtt_ns - s->srtt_ns / 8 + r / 8;
}

void snoop_init(struct flow *f, const struct pep_ctx *ctx)
{
	(void)ctx;
	memset(&f->st.snoop, 0, sizeof(f->st.snoop));
}

/* The oldest cached segment the local timer is responsible for. */
static struct seg *timer_head(struct flow *f)
{
	uint32_t i;

	for (i = 0; i < f->cache.count; i++) {
		struct seg *g = segq_at(&f->cache, i);

		if (!(g->flags & (SEG_SACKED | SEG_NOT_OURS)))
			return g;
	}
	return NULL;
}

/*
 * When the local timer of h expires.  The hop is a FIFO: while it goes on
 * delivering transmissions made before h's latest, h is waiting in the
 * queue behind them, not lost; so the timeout runs from the later of h's
 * send and the last such delivery.  (A delivery of anything sent after h
 * proves h lost at once: detect_losses.)  Timed from the send alone, a
 * queue that stood longer than the smoothed RTT promised set off local
 * rounds for segments that were only late.
 */
static uint64_t timer_deadline(const struct snoop_state *s, const struct seg *h, const struct pep_config *cfg)
{
	uint64_t from = h->last_tx_ns;

	if (s->delivered < h->tx_order && s->delivered_ns > from)
		from = s->delivered_ns;
	return from + snoop_rto(s, cfg);
}

static void rearm(struct flow *f, const struct pep_ctx *ctx, struct pep_out *out)
{
	struct snoop_state *s = &f->st.snoop;
	struct seg *h = timer_head(f);
	uint64_t at;

	if (!h) {
		s->reorder_at = 0;
		if (f->deadline) {
			out->timer_op = TIMER_CANCEL;
			out->timer_at = 0;
		}
		return;
	}
	at = timer_deadline(s, h, ctx->cfg);
	if (s->reorder_at && s->reorder_at < at)
		at = s->reorder_at;
	if (at != f->deadline) {
		out->timer_op = TIMER_SET;
		out->timer_at = at;
	}
}

static void note_transmission(struct snoop_state *s, struct seg *g, uint64_t now, uint8_t copies)
{
	g->tx_first = s->tx_counter + 1;
	s->tx_counter += copies;
	g->tx_order = s->tx_counter;
	g->last_tx_ns = now;
}

/* Is g the fixed host's SYN (a cached SYN-ACK), not data? */
static bool seg_is_syn(const struct flow *f, const struct seg *g)
{
	return f->conn.fh_syn && g->seq == f->conn.fh_isn;
}

/* One local retransmission round of g; false when it was not sent. */
static bool retransmit(const struct snoop_policy *pol, struct flow *f, struct seg *g, const struct pep_ctx *ctx,
		       struct pep_out *out, bool by_timer)
{
	struct snoop_state *s = &f->st.snoop;
	uint32_t rounds = ctx->cfg->max_local_rtx;
	uint8_t extra;

	if (seg_is_syn(f, g) && rounds > SNOOP_SYNACK_ROUNDS)
		rounds = SNOOP_SYNACK_ROUNDS;
	if (g->local_rtx >= rounds) {
		if (!(g->flags & SEG_GIVEN_UP)) {
			g->flags |= SEG_GIVEN_UP;
			COUNT(ctx, f, rtx_given_up, 1);
		}
		return false;
	}
	extra = pol->extra_copies(f, ctx);
	if (extra > SNOOP_MAX_EXTRA_COPIES)
		extra = SNOOP_MAX_EXTRA_COPIES;
	if (!out_push(out, ACTION_SEND_SEGMENT, g->seq, (uint8_t)(1 + extra)))
		return false;
	note_transmission(s, g, ctx->now, (uint8_t)(1 + extra));
	/*
	 * SACK proved the earlier copies lost, so an ACK for the segment is
	 * this round's arrival; unless rtx_priority lets the round overtake
	 * the queue, when its arrival says nothing about what waits there.
	 */
	if (!by_timer && snoop_sack_mode(f, ctx) && !ctx->cfg->rtx_priority)
		g->credit_order = g->tx_first;
	g->local_rtx++;
	g->last_extra = extra;
	g->flags &= (uint8_t)~SEG_SACKED;
	if (by_timer)
		COUNT(ctx, f, local_rtx_timer, 1);
	else
		COUNT(ctx, f, local_rtx, 1);
	COUNT(ctx, f, copies_sent, extra);
	return true;
}

static bool may_retransmit(const struct seg *g)
{
	return !(g->flags & (SEG_SACKED | SEG_NOT_OURS));
}

/*
 * reorder_window (RACK's reordering window): g, sent before a transmission
 * that arrived, is taken for lost once it is later than that one's round
 * trip by more than the window, a share of the hop's minimum round trip;
 * until then it may only be reordered.  Returns when g is due (0: now).
 */
static uint64_t reorder_due(const struct snoop_state *s, const struct seg *g, const struct pep_ctx *ctx)
{
	uint64_t at;

	if (!ctx->cfg->reorder_window_percent || !s->min_rtt_ns)
		return 0;
	at = g->last_tx_ns + s->delivered_rtt_ns + s->min_rtt_ns * ctx->cfg->reorder_window_percent / 100;
	return ctx->now >= at ? 0 : at;
}

/*
 * Retransmit cached segments that a later arrival proves lost (see the
 * top of the file); at most max_burst per event.  SACK only.
 */
static void detect_losses(const struct snoop_policy *pol, struct flow *f, const struct pep_ctx *ctx,
			  struct pep_out *out, bool sackm)
{
	struct snoop_state *s = &f->st.snoop;
	uint32_t budget = ctx->cfg->max_burst, i;

	if (!sackm)
		return;
	s->reorder_at = 0;
	for (i = 0; i < f->cache.count && budget; i++) {
		struct seg *g = segq_at(&f->cache, i);
		uint64_t due;

		if (!may_retransmit(g))
			continue;
		if (s->delivered < g->tx_order + ctx->cfg->rtx_thresh)
			continue;
		due = reorder_due(s, g, ctx);
		if (due) {
			if (!s->reorder_at || due < s->reorder_at)
				s->reorder_at = due;
			if (!(g->flags & SEG_REORDER_HELD)) {
				g->flags |= SEG_REORDER_HELD;
				COUNT(ctx, f, reorder_held, 1);
			}
			continue;
		}
		if (snoop_leave_egress_drop(f, g, ctx))
			continue;
		if (retransmit(pol, f, g, ctx, out, false))
			budget--;
	}
}

/*
 * Cache [seq, end) of data packet p: the whole packet (buf NULL), or one
 * MSS-sized slice of a GSO super-packet's shared copy buf, charged as the
 * packet it would be on its own.  Returns the cached segment, or NULL when
 * a bound refused it (*full set).
 */
static struct seg *cache_segment(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx, uint32_t seq,
				 uint32_t end, struct seg_buf *buf, uint32_t charge, bool *inserted, bool *full)
{
	struct snoop_state *s = &f->st.snoop;
	bool sender_rtx = seq_before(seq, s->snd_max), refused;
	struct seg *g = NULL;
	enum cache_insert r;
	int replaced;

	if (buf)
		r = segq_insert_buf(&f->cache, ctx->budget, seq, end, buf, charge, &g);
	else
		r = segq_insert(&f->cache, ctx->budget, seq, end, p->data, p->len, &g);
	switch (r) {
	case CACHE_INSERTED:
		*inserted = true;
		g->first_tx_ns = ctx->now;
		note_transmission(s, g, ctx->now, 1);
		g->credit_order = g->tx_order;
		if (sender_rtx) {
			g->flags |= SEG_SENDER_RTX;
			/*
			 * An earlier copy may have passed uncached or around this box,
			 * and an ACK for it would say nothing about this one; unless
			 * that copy was this box's congestion signal, dropped here.
			 */
			if (!(s->signal_seq == seq && s->signal_dropped))
				g->credit_order = 0;
		}
		break;
	case CACHE_DUPLICATE:
		/*
		 * The sender's own retransmission of a segment cached here: keep
		 * its bytes, not ours (its timestamp is current; ours may be old
		 * enough for the receiver's PAWS check to discard).
		 */
		if (buf)
			replaced = segq_replace_buf(&f->cache, ctx->budget, g, end, buf, charge);
		else
			replaced = segq_replace(&f->cache, ctx->budget, g, end, p->data, p->len);
		if (replaced < 0) {
			/* no room for the new copy: the old one must not stay; pass it uncached */
			segq_remove(&f->cache, ctx->budget, (uint32_t)segq_find(&f->cache, seq));
			*full = true;
			g = NULL;
			break;
		}
		refused = g->flags & SEG_QUEUE_DROP;
		g->flags = (uint8_t)((g->flags | SEG_SENDER_RTX) & ~(SEG_NOT_OURS | SEG_SACKED));
		g->local_rtx = 0;
		note_transmission(s, g, ctx->now, 1);
		/*
		 * If no earlier copy ever entered the queue, an ACK for it proves
		 * this one arrived; otherwise it may race one of ours: credit only
		 * what was surely sent before.
		 */
		if (refused)
			g->credit_order = g->tx_order;
		break;
	case CACHE_FULL:
	case CACHE_NOMEM:
		*full = true;
		break;
	}
	return g;
}

/*
 * Payload bytes per cached segment of p: all of it when it fits the
 * wireless hop's MTU (a packet as its sender cut it), else what one packet
 * carries there (the MTU, the receiver's MSS).  A GSO super-packet is
 * cached as slices of that size, each found lost and repaired on its own,
 * as the packets its receiver sees are.
 */
static uint32_t slice_payload(const struct flow *f, const struct pkt *p, const struct pep_ctx *ctx)
{
	uint32_t mtu = ctx->mtu ? ctx->mtu : 1500;

	if (p->len <= mtu)
		return p->payload_len;
	return build_slice_payload(mtu, p->payload_off, f->conn.wh_mss, p->tcp_hlen - 20u);
}

/*
 * A SYN-ACK answering the SYN the wireless host sent.  Cached like data:
 * lost on the hop, the client would wait out its initial RTO (1 s) before
 * sending its SYN again; the local timer resends it after rto_initial.
 * Only an answer to a SYN seen from the wireless side: a SYN from the
 * fixed side may be one of a flood, which pepd must not multiply.
 */
static bool answers_wh_syn(const struct flow *f, const struct pkt *p)
{
	return (p->flags & (TCPF_SYN | TCPF_ACK)) == (TCPF_SYN | TCPF_ACK) && f->conn.wh_syn &&
	       seq_after(p->ack, f->conn.wh_isn) && seq_leq(p->ack, f->conn.wh_nxt);
}

/*
 * dsack_dropped_rtx.  A SACK sender that sees a hole (hide_sack off) may
 * retransmit it while this box's repair is on its way; that copy is
 * dropped here, so the receiver never reports it as a duplicate, and the
 * sender keeps the window reduction of a recovery that was not needed and
 * RACK's reordering window stays short enough to start the next one.  The
 * D-SACK block the receiver would have sent (RFC 2883) says so: Linux
 * undoes the reduction (DSACKUndo) and widens the reordering window one
 * step per round with a D-SACK, up to its smoothed RTT.  At most one per
 * segment repaired here: a flood of copies draws one.  The receiver's own
 * D-SACK blocks for duplicates of this box's repairs (a second local round
 * whose first had arrived) are kept from the sender: it never sent those,
 * and Linux ignores every D-SACK once more were reported than it
 * retransmitted, ours included.
 */
static bool dsack_wanted(const struct flow *f, const struct pep_ctx *ctx)
{
	/* a D-SACK block is SACK information: none where the sender is shown none (the paper's Snoop) */
	return ctx->cfg->dsack_dropped_rtx && !ctx->cfg->hide_sack && snoop_sack_mode(f, ctx);
}

/* A segment repaired here was acknowledged: remember it for a late copy from the sender. */
static void note_repaired(struct snoop_state *s, const struct seg *g)
{
	s->repaired[s->repaired_i] = (struct sack_block){ g->seq, g->end };
	s->repaired_i = (uint8_t)((s->repaired_i + 1) % SNOOP_REPAIRED_RING);
}

/* The remembered repair that holds [start, end), or NULL. */
static struct sack_block *repaired_holding(struct snoop_state *s, uint32_t start, uint32_t end)
{
	unsigned int i;

	for (i = 0; i < SNOOP_REPAIRED_RING; i++) {
		struct sack_block *b = &s->repaired[i];

		if (b->start != b->end && seq_geq(start, b->start) && seq_leq(end, b->end))
			return b;
	}
	return NULL;
}

/* The sender's copy of [seq, end), acknowledged already and dropped: was it of a repair of ours? */
static bool dsack_late_copy(struct flow *f, uint32_t seq, uint32_t end, const struct pep_ctx *ctx,
			    struct pep_out *out)
{
	struct snoop_state *s = &f->st.snoop;
	struct sack_block *b;

	if (!dsack_wanted(f, ctx))
		return false;
	b = repaired_holding(s, seq, end);
	if (!b)
		return false;
	*b = (struct sack_block){ 0, 0 };
	if (!out_push_dsack(out, s->last_ack, seq, end))
		return false;
	COUNT(ctx, f, dsacks_sent, 1);
	return true;
}

/* An ACK passed on with its SACK blocks: drop a leading D-SACK block for a duplicate of our repair. */
static void keep_our_dsack(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx, struct pep_out *out)
{
	uint8_t n;

	if (!dsack_wanted(f, ctx) || out->verdict != VERDICT_ACCEPT ||
	    !snoop_first_block_is_dsack(p) || !repaired_holding(&f->st.snoop, p->sack[0].start, p->sack[0].end))
		return;
	n = p->nsack - 1 < 2 ? (uint8_t)(p->nsack - 1) : 2;
	if (n) {
		out->sack_n = n;
		memcpy(out->sack_blocks, &p->sack[1], n * sizeof(p->sack[0]));
	} else {
		out->hide_sack = true;
	}
	COUNT(ctx, f, dsacks_kept, 1);
}

static void on_data(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx, struct pep_out *out)
{
	struct snoop_state *s = &f->st.snoop;
	const struct pep_config *cfg = ctx->cfg;
	uint32_t end = pkt_end(p), slice, off;
	bool sender_rtx, inserted = false, full = false, all;
	struct seg_buf *buf;

	COUNT(ctx, f, data_packets, 1);
	if (p->flags & TCPF_SYN) {
		if (!s->data_seen)
			s->snd_max = p->seq;
		s->data_seen = true;
		if (answers_wh_syn(f, p)) {
			cache_segment(f, p, ctx, p->seq, end, NULL, p->len, &inserted, &full);
			if (inserted)
				COUNT(ctx, f, syn_acks_cached, 1);
			if (full)
				COUNT(ctx, f, cache_full, 1);
		}
		s->snd_max = end;
		return;
	}
	snoop_wired_rtt_sample(s, p, ctx->now);
	if (!s->data_seen) {
		s->snd_max = p->seq;
		s->data_seen = true;
	}
	if (p->payload_len == 0) {
		if (seq_after(end, s->snd_max))
			s->snd_max = end;	/* a FIN */
		return;
	}
	if (s->ack_seen && seq_leq(end, s->last_ack)) {
		/* Every byte of it is acknowledged already: the wireless host has it. */
		COUNT(ctx, f, sender_rtx, 1);
		COUNT(ctx, f, data_dropped, 1);
		out->verdict = VERDICT_DROP;
		if (dsack_late_copy(f, p->seq, end, ctx, out))
			return;
		if (cfg->ack_acked_rtx &&
		    (s->last_gen_ack_ns == 0 || ctx->now - s->last_gen_ack_ns >= cfg->rto_min_ns) &&
		    out_push(out, ACTION_SEND_ACK, s->last_ack, 1)) {
			s->last_gen_ack_ns = ctx->now;
			COUNT(ctx, f, acks_generated, 1);
		}
		return;
	}
	sender_rtx = seq_before(p->seq, s->snd_max);
	if (sender_rtx) {
		long i = segq_find(&f->cache, p->seq);
		struct seg *h = i >= 0 ? segq_at(&f->cache, (uint32_t)i) : NULL;

		COUNT(ctx, f, sender_rtx, 1);
		if (h && h->seq == p->seq && h->local_rtx && !(h->flags & (SEG_NOT_OURS | SEG_SENDER_RTX)) &&
		    ctx->now - h->last_tx_ns < snoop_rto(s, cfg)) {
			/* our own retransmission of it is on its way: this copy would only waste the hop */
			out->verdict = VERDICT_DROP;
			COUNT(ctx, f, sender_rtx_dropped, 1);
			if (dsack_wanted(f, ctx))
				h->flags |= SEG_RTX_DROPPED;	/* reported when the receiver acknowledges ours */
			return;
		}
		if (!h || h->flags & SEG_NOT_OURS) {
			/* the sender recovers a hole left to it: it is in recovery until all it sent is acknowledged */
			s->sender_recovering = true;
			s->sender_recover = s->snd_max;
		}
	}
	if (!sender_rtx && snoop_signal_due(f, cfg, ctx->now)) {
		/* dropped here and never cached: its loss, and the congestion, are the sender's to see */
		out->verdict = VERDICT_DROP;
		snoop_start_signal(s, p->seq, ctx);
		s->signal_dropped = true;
		s->snd_max = end;
		COUNT(ctx, f, congestion_signals, 1);
		return;
	}
	if (!sender_rtx && s->ack_seen &&
	    (uint64_t)(uint32_t)(s->snd_max - s->last_ack) + p->payload_len <= 3 * snoop_mss(f)) {
		if (!s->clear_valid)
			s->clear_start = p->seq;
		s->clear_valid = true;
		s->clear_end = end;
	}
	slice = slice_payload(f, p, ctx);
	if (p->payload_len <= slice) {
		all = cache_segment(f, p, ctx, p->seq, end, NULL, p->len, &inserted, &full) != NULL;
	} else {
		/* a GSO super-packet: one copy, cut once into slices, each a segment of its own */
		buf = seg_buf_new(ctx->budget, p->data, p->len);
		all = buf != NULL;
		full = buf == NULL;
		for (off = 0; buf && off < p->payload_len; off += slice) {
			uint32_t n = p->payload_len - off < slice ? p->payload_len - off : slice;
			uint32_t sseq = p->seq + off, send = off + n == p->payload_len ? end : sseq + n;

			if (!cache_segment(f, p, ctx, sseq, send, buf, p->payload_off + n, &inserted, &full))
				all = false;
		}
		seg_buf_put(ctx->budget, buf);
	}
	if (inserted)
		COUNT(ctx, f, cached_packets, 1);
	if (full)
		COUNT(ctx, f, cache_full, 1);
	/* auto: a super-packet goes the kernel's way, whose GSO cuts it far cheaper than pepd's sends could */
	if (all && (cfg->forward == FORWARD_INJECT || (cfg->forward == FORWARD_AUTO && p->payload_len <= slice))) {
		/* pepd sends the copy itself: the egress queue's answer tells congestion from wireless loss */
		out->verdict = VERDICT_INJECT;
		out->inject_seq = p->seq;
		out->inject_end = end;
	}
	if (seq_after(end, s->snd_max))
		s->snd_max = end;
}

static void on_new_ack(const struct snoop_policy *pol, struct flow *f, const struct pkt *p,
		       const struct pep_ctx *ctx, struct pep_out *out, bool sackm)
{
	struct snoop_state *s = &f->st.snoop;
	struct seg *sample = NULL, *h;
	uint32_t discount = 0, i, prev_dupacks = s->dupacks, reported = 0;
	bool dsack = dsack_wanted(f, ctx);

	for (i = 0; i < f->cache.count; i++) {
		struct seg *g = segq_at(&f->cache, i);

		if (seq_after(g->end, p->ack))
			break;
		if (!(g->flags & SEG_SENDER_RTX))
			pol->first_tx_outcome(f, ctx, g->local_rtx > 0);
		if (!(g->flags & SEG_SACKED))	/* a SACKed one was counted then */
			snoop_arrived(f, g, ctx);
		if (g->flags & SEG_RATE_COUNTED)
			reported += g->end - g->seq;
		/* a dropped copy of the sender's is reported, unless a later one went on (the receiver reports it) */
		if (dsack && (g->flags & (SEG_RTX_DROPPED | SEG_SENDER_RTX)) == SEG_RTX_DROPPED) {
			if (out_push_dsack(out, p->ack, g->seq, g->end))
				COUNT(ctx, f, dsacks_sent, 1);
		} else if (dsack && g->local_rtx > 0 && !(g->flags & (SEG_SENDER_RTX | SEG_NOT_OURS))) {
			note_repaired(s, g);
		}
		/*
		 * The RTT sample is the segment sent last: the ACK cannot have
		 * left before it arrived.  A segment sent before a hole waited
		 * for the hole's repair, so its age is not the hop's round trip
		 * (taking it inflated srtt, the local timeout and the congestion
		 * signal's delay at every repair).  If the one sent last was
		 * retransmitted (here or by the sender), which copy drew the ACK
		 * is unknown (Karn): no sample.
		 */
		if (!sample || g->last_tx_ns >= sample->last_tx_ns)
			sample = g;
		if (g->local_rtx > 0)
			discount += g->last_extra;
		/* did one round do (what Snoop+'s copies are for), or did the first get lost too? */
		if (g->local_rtx == 1)
			COUNT(ctx, f, repaired_one_round, 1);
		else if (g->local_rtx > 1)
			COUNT(ctx, f, repaired_more_rounds, 1);
	}
	if (sample && sample->local_rtx == 0 && !(sample->flags & (SEG_SENDER_RTX | SEG_UNSENT_TX)) &&
	    ctx->now >= sample->last_tx_ns)
		rtt_sample(f, ctx->now - sample->last_tx_ns,
			   s->clear_valid && seq_geq(sample->seq, s->clear_start) && seq_leq(sample->end, s->clear_end),
			   ctx);
	if (s->clear_valid && seq_geq(p->ack, s->clear_end))
		s->clear_valid = false;
	segq_ack(&f->cache, ctx->budget, p->ack);
	snoop_count_delivered(s, p->ack - s->last_ack, reported, seq_geq(p->ack, s->snd_max));
	snoop_rate_update(s, ctx->now);
	s->last_ack = p->ack;
	s->last_win = p->window;
	s->dupacks = 0;
	s->backoff = 0;
	if (s->signal_pending && seq_after(p->ack, s->signal_seq))
		s->signal_pending = false;	/* the sender recovered the signal */
	if (s->sender_recovering && seq_geq(p->ack, s->sender_recover))
		s->sender_recovering = false;
	/*
	 * The remaining extra copies will each draw a dupack for the new ACK.
	 * With SACK they are recognised by their DSACK block anyway; without,
	 * discount_copy_dupacks = false counts them like any dupack (the
	 * paper's Snoop+, whose c >= 3 then triggers a false round).
	 */
	s->dup_discount = sackm || ctx->cfg->discount_copy_dupacks ? discount : 0;
	/*
	 * Without SACK: i segments were acknowledged, the old hole and i - 1
	 * that had arrived above it, each of which drew one of its dupacks.
	 * Dupacks beyond those came from arrivals above the new ACK: the
	 * segment it names is missing.
	 */
	h = f->cache.count ? segq_at(&f->cache, 0) : NULL;
	if (!sackm && i && h && seq_leq(h->seq, p->ack) && h->local_rtx == 0 && may_retransmit(h) &&
	    !(h->flags & SEG_SENDER_RTX) &&
	    (prev_dupacks >= i - 1 + ctx->cfg->rtx_thresh || s->delivered > h->tx_order))
		retransmit(pol, f, h, ctx, out, false);
}

/* Is the segment a partial ACK names cached here and being (or to be) repaired by this box? */
static bool partial_ack_ours(const struct flow *f, uint32_t ack)
{
	long i = segq_find(&f->cache, ack);

	return i >= 0 && !(segq_at(&f->cache, (uint32_t)i)->flags & (SEG_NOT_OURS | SEG_SENDER_RTX | SEG_SACKED));
}

static void on_dupack(const struct snoop_policy *pol, struct flow *f, const struct pkt *p, const struct pep_ctx *ctx,
		      struct pep_out *out, bool sackm)
{
	struct snoop_state *s = &f->st.snoop;
	bool only_dsack = sackm && p->nsack == 1 && snoop_first_block_is_dsack(p);
	struct seg *h = NULL;
	bool handled, ours = false;
	long i;

	i = segq_find(&f->cache, s->last_ack);
	if (i >= 0)
		h = segq_at(&f->cache, (uint32_t)i);
	if (s->dup_discount && (!sackm || only_dsack || !p->nsack)) {
		/* drawn by one of our extra copies: neither evidence nor the sender's business */
		s->dup_discount--;
		ours = true;
	} else if (!only_dsack) {
		s->dupacks++;	/* a DSACK-only dupack reports a duplicate: no news about holes */
		if (!sackm)
			snoop_credit_dupack(f, ctx->now);
	}
	handled = h && !(h->flags & (SEG_NOT_OURS | SEG_SENDER_RTX));
	if (handled && sackm && p->nsack) {
		uint32_t exposed;

		handled = snoop_holes_cached(f, p, &exposed);
	}
	/* without SACK, the paper's rule for the first round: rtx_thresh dupacks */
	if (!sackm && h && h->local_rtx == 0 && may_retransmit(h) && !(h->flags & SEG_SENDER_RTX) &&
	    s->dupacks >= ctx->cfg->rtx_thresh && !snoop_leave_egress_drop(f, h, ctx))
		retransmit(pol, f, h, ctx, out, false);
	detect_losses(pol, f, ctx, out, sackm);
	/* a hole given up just now belongs to the sender: let this dupack through */
	if (handled && h->flags & SEG_NOT_OURS)
		handled = false;
	/* the link-layer stand-in: repair here, but the sender sees every dupack */
	if (!snoop_drops_dupacks(f, ctx))
		handled = false;
	if (handled && !ours && snoop_repair_window_opens(f, p, ctx)) {
		/* on to the sender as a window update (SACK blanked): one more segment per arrival */
		COUNT(ctx, f, repair_window_updates, 1);
	} else if (handled || ours) {
		out->verdict = VERDICT_DROP;
		COUNT(ctx, f, dupacks_dropped, 1);
	} else {
		COUNT(ctx, f, dupacks_forwarded, 1);
	}
}

/*
 * The wireless host's ACK of a SYN-ACK cached here, sent once (Karn): the
 * hop's first round trip.  It times the local timer of the first window
 * (a tail loss there otherwise waits rto_initial), and nothing else: a
 * 60-byte SYN-ACK's round trip leaves out a full segment's serialisation,
 * too little for the minimum RTT the congestion signal and the clamp use.
 */
static void handshake_rtt_sample(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx)
{
	const struct seg *g = f->cache.count ? segq_at(&f->cache, 0) : NULL;

	if (g && seg_is_syn(f, g) && seq_leq(g->end, p->ack) && g->local_rtx == 0 &&
	    !(g->flags & SEG_SENDER_RTX) && ctx->now > g->last_tx_ns)
		f->st.snoop.handshake_rtt_ns = ctx->now - g->last_tx_ns;
}

static void on_ack_evidence(const struct snoop_policy *pol, struct flow *f, const struct pkt *p,
			    const struct pep_ctx *ctx, struct pep_out *out, bool sackm, bool pure)
{
	struct snoop_state *s = &f->st.snoop;

	if (!(p->flags & TCPF_ACK))
		return;
	if (!s->ack_seen || (s->data_seen && seq_after(p->ack, s->snd_max))) {
		/*
		 * The first ACK, or one for data this box never saw (adopted
		 * mid-stream, or packets that bypassed it): start over here.
		 */
		s->ack_seen = true;
		s->last_ack = p->ack;
		s->last_win = p->window;
		s->dupacks = 0;
		s->dup_discount = 0;
		s->backoff = 0;
		if (s->data_seen && seq_after(p->ack, s->snd_max))
			s->snd_max = p->ack;
		handshake_rtt_sample(f, p, ctx);
		segq_ack(&f->cache, ctx->budget, p->ack);
		return;
	}
	if (seq_after(p->ack, s->last_ack)) {
		on_new_ack(pol, f, p, ctx, out, sackm);
		if (sackm)
			snoop_sack_mark(f, p, ctx);
		detect_losses(pol, f, ctx, out, sackm);
		snoop_present_sack(f, p, ctx, out, sackm);
		keep_our_dsack(f, p, ctx, out);
		if (!sackm && pure && snoop_drops_dupacks(f, ctx) && s->sender_recovering && partial_ack_ours(f, p->ack)) {
			/*
			 * A NewReno sender in recovery answers every partial ACK by
			 * retransmitting the segment it names.  That segment is being
			 * repaired here: keep the partial ACK; the next one, once
			 * the repair has arrived, tells the sender more.
			 */
			out->verdict = VERDICT_DROP;
			COUNT(ctx, f, partial_acks_held, 1);
		}
	} else if (p->ack == s->last_ack) {
		if (sackm)
			snoop_sack_mark(f, p, ctx);
		/*
		 * With SACK a duplicate ACK is any pure ACK repeating the last
		 * one, whatever its window (a Linux receiver grows its window
		 * while out-of-order data arrive; the SACK blocks say what
		 * arrived; a dropped one's window comes with the next new ACK).
		 * Without SACK, RFC 5681's definition: the window unchanged too,
		 * since a window update may come from the application reading.
		 */
		bool dup = pure && (sackm || p->window == s->last_win);

		s->last_win = p->window;
		if (dup)
			on_dupack(pol, f, p, ctx, out, sackm);
		else
			detect_losses(pol, f, ctx, out, sackm);
		snoop_present_sack(f, p, ctx, out, sackm);
		keep_our_dsack(f, p, ctx, out);
	} else if (pure) {
		/* older than an ACK already seen: reordered on the way up, nothing new */
		out->verdict = VERDICT_DROP;
		COUNT(ctx, f, stale_acks_dropped, 1);
	}
}

static void on_ack(const struct snoop_policy *pol, struct flow *f, const struct pkt *p, const struct pep_ctx *ctx,
		   struct pep_out *out)
{
	struct snoop_state *s = &f->st.snoop;
	bool sackm = snoop_sack_mode(f, ctx);
	bool pure = p->payload_len == 0 && !(p->flags & (TCPF_SYN | TCPF_FIN | TCPF_RST));
	uint64_t delivered = s->delivered;

	COUNT(ctx, f, ack_packets, 1);
	on_ack_evidence(pol, f, p, ctx, out, sackm, pure);
	if (s->delivered > delivered)
		s->delivered_ns = ctx->now;
}

void snoop_packet(const struct snoop_policy *pol, struct flow *f, const struct pkt *p, enum pep_dir dir,
		  const struct pep_ctx *ctx, struct pep_out *out)
{
	if (p->flags & TCPF_RST) {
		segq_clear(&f->cache, ctx->budget);
		if (f->deadline)
			out->timer_op = TIMER_CANCEL;
		return;
	}
	if (dir == DIR_TO_WIRELESS) {
		on_data(f, p, ctx, out);
	} else {
		on_ack(pol, f, p, ctx, out);
		if (out->verdict == VERDICT_ACCEPT && (p->flags & TCPF_ACK)) {
			snoop_note_forwarded_ts(&f->st.snoop, p, ctx->now);
			snoop_clamp_window(f, p, ctx, out);
		}
	}
	snoop_clamp_generated_acks(f, ctx, out);
	rearm(f, ctx, out);
}

void snoop_timer(const struct snoop_policy *pol, struct flow *f, const struct pep_ctx *ctx, struct pep_out *out)
{
	struct snoop_state *s = &f->st.snoop;
	struct seg *h;

	if (s->reorder_at && ctx->now >= s->reorder_at)
		detect_losses(pol, f, ctx, out, snoop_sack_mode(f, ctx));
	h = timer_head(f);
	if (h && ctx->now >= timer_deadline(s, h, ctx->cfg)) {
		/*
		 * The oldest hole only, as in Snoop: a timeout is no evidence of
		 * loss (the segment may be queued behind a long egress queue), so
		 * it costs one segment per backoff step at most.  Holes that
		 * arrivals prove lost are retransmitted by detect_losses.
		 */
		COUNT(ctx, f, timer_expiries, 1);
		if (retransmit(pol, f, h, ctx, out, true) && s->backoff < SNOOP_MAX_BACKOFF)
			s->backoff++;
	}
	rearm(f, ctx, out);	/* the glue popped the timer: f->deadline is 0 */
}

void snoop_report(const struct flow *f, const struct pep_ctx *ctx, struct json_out *j)
{
	const struct snoop_state *s = &f->st.snoop;

	jo_bool(j, "sack", snoop_sack_mode(f, ctx));
	jo_bool(j, "drops_dupacks", snoop_drops_dupacks(f, ctx));
	jo_dbl(j, "srtt_ms", s->rtt_valid ? (double)s->srtt_ns / 1e6 : 0.0);
	jo_dbl(j, "rttvar_ms", s->rtt_valid ? (double)s->rttvar_ns / 1e6 : 0.0);
	jo_dbl(j, "rto_ms", (double)snoop_rto(s, ctx->cfg) / 1e6);
	jo_dbl(j, "min_rtt_ms", (double)s->min_rtt_ns / 1e6);
	jo_dbl(j, "wired_rtt_ms", (double)s->wired_rtt_ns / 1e6);
	jo_dbl(j, "rate_mbps", (double)snoop_max_rate(s) * 8 / 1e6);
	jo_u64(j, "window_clamp_bytes", snoop_clamp_bytes(f, ctx->cfg));
	jo_u64(j, "queue_cap_bytes", f->st.snoop.queue_cap);
	jo_dbl(j, "last_rtt_ms", (double)s->last_rtt_ns / 1e6);
	jo_u64(j, "dupacks", s->dupacks);
	jo_u64(j, "transmissions", s->tx_counter);
}

static uint8_t no_copies(struct flow *f, const struct pep_ctx *ctx)
{
	(void)f;
	(void)ctx;
	return 0;
}

static void ignore_outcome(struct flow *f, const struct pep_ctx *ctx, bool lost)
{
	(void)f;
	(void)ctx;
	(void)lost;
}

static const struct snoop_policy plain_snoop = {
	.extra_copies = no_copies,
	.first_tx_outcome = ignore_outcome,
};

static void snoop_on_packet(struct flow *f, const struct pkt *p, enum pep_dir dir, const struct pep_ctx *ctx,
			    struct pep_out *out)
{
	snoop_packet(&plain_snoop, f, p, dir, ctx, out);
}

static void snoop_on_timer(struct flow *f, const struct pep_ctx *ctx, struct pep_out *out)
{
	snoop_timer(&plain_snoop, f, ctx, out);
}

const struct pep_filter_ops filter_snoop = {
	.name = "snoop",
	.init = snoop_init,
	.packet = snoop_on_packet,
	.timer = snoop_on_timer,
	.sent = snoop_sent,
	.report = snoop_report,
};
