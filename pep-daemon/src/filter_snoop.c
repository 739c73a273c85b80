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
 * Congestion.  Hiding wireless losses also hides congestion: a sender that
 * never sees a loss grows its window until this box's egress queue
 * overflows, in bursts.  Two signals reach it instead:
 *   - forward = inject: pepd sends the cached data itself, and a segment
 *     the egress queue refuses (ENOBUFS) is a congestion loss, left to the
 *     sender (its dupacks and SACK blocks pass);
 *   - aqm_target: when the hop's RTT has stood more than aqm_target above
 *     its minimum for aqm_interval (a standing queue), the next new segment
 *     is dropped, uncached, as a congestion signal, once per sender
 *     reaction (CoDel's idea with one drop per episode): the sender halves
 *     its window with one retransmission instead of losing a burst to tail
 *     drop, most of all when slow start overshoots.
 *
 * Pacing.  The papers' senders had small windows (ns-2's 20 packets); a
 * Linux sender's window grows until something stops it.  With
 * window_clamp, the window field of ACKs passed to the sender is cut to
 * twice the path's bandwidth-delay product: the hop's delivery rate (max
 * of the last SNOOP_RATE_SAMPLES samples, one per hop RTT) times the
 * path's minimum round trip (the hop's, from cached segments, plus the
 * wired side's: from passing an ACK to the data that echoes its
 * timestamp).  Twice (BBR's cwnd gain), because while a hole is repaired
 * here the cumulative ACK stands still and the sender can only go on
 * sending if its window holds more than one round trip of data.  The
 * right edge never moves back (RFC 9293 3.8.6).  The queue this allows (up
 * to one path round trip) is not congestion: aqm_target counts above it.
 * The congestion signals are then for what the clamp cannot see (other
 * traffic, a slower channel, a window that is not scaled as expected).
 * The egress queue's limit counts packets, the clamp bytes: with small
 * segments (Huang and Ferng's 512 bytes: 2 x BDP is 62 of them) twice the
 * BDP is more than the queue holds.  So a refusal also caps the clamp at
 * what was outstanding on the hop then, less one segment (never below one
 * BDP), for QUEUE_CAP_HOLD_NS after the last refusal: the window stops at what the
 * queue can take instead of overflowing it again every round trip.
 *
 * SACK towards the sender: while every hole below the highest SACK block is
 * cached here (so this box will repair it), the SACK option of forwarded
 * ACKs is blanked (hide_sack): a RACK/SACK sender would otherwise mark the
 * holes lost about min_rtt/4 later and retransmit them itself, halving its
 * window for a loss the base station repairs anyway.  When a hole is not
 * cached (lost before this box, or the cache was full), ACKs pass untouched:
 * that loss is the sender's to recover, and its SACK information is true.
 */
#include <string.h>

#include "filter_snoop.h"
#include "flow.h"
#include "json.h"
#include "seq.h"

#define NS_PER_MS 1000000ULL
#define RTTVAR_FLOOR_NS (1 * NS_PER_MS)	/* keep rto above srtt when the hop is perfectly steady */

static bool sack_mode(const struct flow *f, const struct pep_ctx *ctx)
{
	return ctx->cfg->use_sack && conn_sack_ok(&f->conn);
}

uint64_t snoop_rto(const struct snoop_state *s, const struct pep_config *cfg)
{
	uint64_t rto, var;

	if (s->rtt_valid) {
		var = 4 * s->rttvar_ns;
		rto = s->srtt_ns + (var > RTTVAR_FLOOR_NS ? var : RTTVAR_FLOOR_NS);
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

#define MIN_RTT_WINDOW_NS (10ULL * 1000000000ULL)

static void rtt_sample(struct snoop_state *s, uint64_t r, uint64_t now)
{
	uint64_t err;

	s->last_rtt_ns = r;
	if (!s->min_rtt_ns || r <= s->min_rtt_ns || now - s->min_rtt_stamp > MIN_RTT_WINDOW_NS) {
		s->min_rtt_ns = r;
		s->min_rtt_stamp = now;
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

static void rearm(struct flow *f, const struct pep_ctx *ctx, struct pep_out *out)
{
	struct seg *h = timer_head(f);
	uint64_t at;

	if (!h) {
		if (f->deadline) {
			out->timer_op = TIMER_CANCEL;
			out->timer_at = 0;
		}
		return;
	}
	at = h->last_tx_ns + snoop_rto(&f->st.snoop, ctx->cfg);
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

static void credit_arrival(struct snoop_state *s, const struct seg *g)
{
	if (g->credit_order > s->delivered)
		s->delivered = g->credit_order;
}

/* One local retransmission round of g; false when it was not sent. */
static bool retransmit(const struct snoop_policy *pol, struct flow *f, struct seg *g, const struct pep_ctx *ctx,
		       struct pep_out *out, bool by_timer)
{
	struct snoop_state *s = &f->st.snoop;
	uint8_t extra;

	if (g->local_rtx >= ctx->cfg->max_local_rtx) {
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
	if (!by_timer && sack_mode(f, ctx) && !ctx->cfg->rtx_priority)
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
	for (i = 0; i < f->cache.count && budget; i++) {
		struct seg *g = segq_at(&f->cache, i);

		if (!may_retransmit(g))
			continue;
		if (s->delivered < g->tx_order + ctx->cfg->rtx_thresh)
			continue;
		if (retransmit(pol, f, g, ctx, out, false))
			budget--;
	}
}

/* RFC 2883: the first block reports a duplicate if it lies below the ACK or inside the second block. */
static bool first_block_is_dsack(const struct pkt *p)
{
	if (p->nsack == 0)
		return false;
	if (seq_before(p->sack[0].start, p->ack))
		return true;
	return p->nsack > 1 && seq_geq(p->sack[0].start, p->sack[1].start) && seq_leq(p->sack[0].end, p->sack[1].end);
}

/* Is a SACK block plausible: non-empty, above the ACK, not beyond what was sent? */
static bool block_valid(const struct snoop_state *s, const struct sack_block *b, uint32_t ack)
{
	return seq_before(b->start, b->end) && seq_geq(b->start, ack) && seq_leq(b->end, s->snd_max);
}

/* Mark cached segments the SACK blocks cover; they are evidence of arrival. */
static void sack_mark(struct flow *f, const struct pkt *p)
{
	struct snoop_state *s = &f->st.snoop;
	int b = first_block_is_dsack(p) ? 1 : 0;
	uint32_t i;

	for (; b < p->nsack; b++) {
		const struct sack_block *blk = &p->sack[b];

		if (!block_valid(s, blk, p->ack))
			continue;
		for (i = 0; i < f->cache.count; i++) {
			struct seg *g = segq_at(&f->cache, i);

			if (seq_geq(g->seq, blk->end))
				break;
			if (seq_geq(g->seq, blk->start) && seq_leq(g->end, blk->end) && !(g->flags & SEG_SACKED)) {
				g->flags |= SEG_SACKED;
				credit_arrival(s, g);
			}
		}
	}
}

/*
 * Will this box repair every hole below the highest SACK block?  Then the
 * sender need not see the blocks (nor the dupack that carries them).
 */
static bool holes_cached(const struct flow *f, const struct pkt *p, uint32_t *exposed)
{
	const struct snoop_state *s = &f->st.snoop;
	uint32_t pos = p->ack, top = p->ack, guard;
	int b, first = first_block_is_dsack(p) ? 1 : 0;

	for (b = first; b < p->nsack; b++)
		if (block_valid(s, &p->sack[b], p->ack) && seq_after(p->sack[b].end, top))
			top = p->sack[b].end;
	for (guard = f->cache.count + PKT_MAX_SACK + 2; seq_before(pos, top) && guard; guard--) {
		bool moved = false;
		long i;

		for (b = first; b < p->nsack; b++) {
			const struct sack_block *blk = &p->sack[b];

			if (block_valid(s, blk, p->ack) && seq_leq(blk->start, pos) && seq_after(blk->end, pos)) {
				pos = blk->end;
				moved = true;
				break;
			}
		}
		if (moved)
			continue;
		*exposed = pos;
		i = segq_find(&f->cache, pos);
		if (i < 0)
			return false;	/* a hole this box has no copy of */
		const struct seg *g = segq_at(&f->cache, (uint32_t)i);

		if (g->flags & (SEG_NOT_OURS | SEG_SENDER_RTX))
			return false;	/* the sender is (or must be) recovering it */
		pos = g->end;
	}
	*exposed = pos;
	return !seq_before(pos, top);
}

/* Is pos inside a valid, non-DSACK block of p?  Then where does that block end? */
static bool in_block(const struct flow *f, const struct pkt *p, uint32_t pos, uint32_t *end)
{
	int b;

	for (b = first_block_is_dsack(p) ? 1 : 0; b < p->nsack; b++) {
		const struct sack_block *blk = &p->sack[b];

		if (block_valid(&f->st.snoop, blk, p->ack) && seq_leq(blk->start, pos) && seq_after(blk->end, pos)) {
			*end = blk->end;
			return true;
		}
	}
	return false;
}

/*
 * The one SACK block to show the sender for the hole at `exposed` that is
 * its to recover: from the hole's end, everything that is either received
 * (SACKed) or held here for local repair, up to the next hole that is not
 * ours.  Data held here is reported as received: a promise pepd keeps by
 * repairing it (and if it gives up, the sender's SACK-reneging timer
 * retransmits it).  Without that, a SACK sender would retransmit every hole
 * above the exposed one too, all of them already being repaired here.
 */
static bool exposed_block(const struct flow *f, const struct pkt *p, uint32_t exposed, struct sack_block *blk)
{
	const struct snoop_state *s = &f->st.snoop;
	uint32_t pos, top = p->ack, guard, end;
	long i = segq_find(&f->cache, exposed);
	int b;

	for (b = first_block_is_dsack(p) ? 1 : 0; b < p->nsack; b++)
		if (block_valid(s, &p->sack[b], p->ack) && seq_after(p->sack[b].end, top))
			top = p->sack[b].end;
	if (i >= 0) {
		pos = segq_at(&f->cache, (uint32_t)i)->end;	/* the hole is one cached segment */
	} else {
		/* not cached here: it reaches up to the next block */
		pos = top;
		for (b = first_block_is_dsack(p) ? 1 : 0; b < p->nsack; b++)
			if (block_valid(s, &p->sack[b], p->ack) && seq_after(p->sack[b].start, exposed) &&
			    seq_before(p->sack[b].start, pos))
				pos = p->sack[b].start;
	}
	blk->start = pos;
	for (guard = f->cache.count + PKT_MAX_SACK + 2; seq_before(pos, top) && guard; guard--) {
		if (in_block(f, p, pos, &end)) {
			pos = end;
			continue;
		}
		i = segq_find(&f->cache, pos);
		if (i < 0 || segq_at(&f->cache, (uint32_t)i)->flags & (SEG_NOT_OURS | SEG_SENDER_RTX))
			break;
		pos = segq_at(&f->cache, (uint32_t)i)->end;
	}
	blk->end = pos;
	return seq_after(blk->end, blk->start);
}

static void maybe_hide_sack(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx, struct pep_out *out,
			    bool sackm)
{
	uint32_t exposed = p->ack;
	struct sack_block one;

	if (!sackm || !p->nsack || !ctx->cfg->hide_sack || out->verdict != VERDICT_ACCEPT)
		return;
	if (holes_cached(f, p, &exposed)) {
		out->hide_sack = true;
		COUNT(ctx, f, sack_hidden, 1);
		return;
	}
	if (exposed_block(f, p, exposed, &one) &&
	    !(p->nsack == 1 && one.start == p->sack[0].start && one.end == p->sack[0].end)) {
		out->sack_one = true;
		out->sack_one_block = one;
		COUNT(ctx, f, sack_trimmed, 1);
	}
}

static void start_signal(struct snoop_state *s, uint32_t seq, const struct pep_ctx *ctx)
{
	s->signal_dropped = false;
	s->signal_pending = true;
	s->signal_seq = seq;
	s->signal_ns = ctx->now;
	s->above_since = 0;
}

#define RATE_MIN_INTERVAL_NS (50 * NS_PER_MS)
#define MIN_CLAMP_SEGMENTS 4
#define QUEUE_CAP_HOLD_NS (10ULL * 1000000000ULL)

/*
 * One delivery-rate sample per two hop RTTs (at least 50 ms): long enough
 * that the burst of a cumulative ACK jumping over a repaired hole does not
 * pass for a faster link.
 */
static void rate_update(struct snoop_state *s, uint64_t now)
{
	uint64_t span = s->rtt_valid && 2 * s->srtt_ns > RATE_MIN_INTERVAL_NS ? 2 * s->srtt_ns : RATE_MIN_INTERVAL_NS;

	if (!s->rate_start_ns) {
		s->rate_start_ns = now;
		s->rate_start_bytes = s->acked_bytes;
		return;
	}
	if (s->queue_cap && now - s->queue_cap_ns > QUEUE_CAP_HOLD_NS)
		s->queue_cap = 0;	/* no refusal for a while: the queue (or the path) may have grown */
	if (now - s->rate_start_ns < span)
		return;
	s->rate[s->rate_i] = (s->acked_bytes - s->rate_start_bytes) * 1000000000ULL / (now - s->rate_start_ns);
	s->rate_i = (uint8_t)((s->rate_i + 1) % SNOOP_RATE_SAMPLES);
	if (s->rate_n < SNOOP_RATE_SAMPLES)
		s->rate_n++;
	s->rate_start_ns = now;
	s->rate_start_bytes = s->acked_bytes;
}

static uint64_t max_rate(const struct snoop_state *s)
{
	uint64_t m = 0;
	uint8_t i;

	for (i = 0; i < s->rate_n; i++)
		if (s->rate[i] > m)
			m = s->rate[i];
	return m;
}

#define CLAMP_GAIN 2

bool snoop_copies_are_free(const struct snoop_state *s, uint64_t mss, uint8_t copies)
{
	uint64_t rate = max_rate(s), room_ns;

	if (!s->rtt_valid || !rate)
		return false;
	room_ns = (uint64_t)(copies + 1) * mss * 1000000000ULL / rate;
	return s->last_rtt_ns < s->min_rtt_ns + room_ns;
}

/* The path's minimum round trip, or 0 while unknown. */
static uint64_t path_min_rtt(const struct snoop_state *s)
{
	return s->wired_rtt_ns && s->min_rtt_ns ? s->wired_rtt_ns + s->min_rtt_ns : 0;
}

uint64_t snoop_mss(const struct flow *f)
{
	return f->conn.max_payload ? f->conn.max_payload : 1448;
}

/* The window the sender may have in flight, bytes; 0 while nothing is known. */
static uint64_t clamp_bytes(const struct flow *f, const struct pep_config *cfg)
{
	const struct snoop_state *s = &f->st.snoop;
	uint64_t mss = snoop_mss(f), bytes, bdp = 0;

	if (!cfg->window_clamp)
		return 0;
	if (s->rate_n >= 2 && path_min_rtt(s))
		bdp = max_rate(s) * path_min_rtt(s) / 1000000000ULL;
	bytes = CLAMP_GAIN * bdp;
	/* never below one BDP: a smaller window leaves the link idle whatever the queue */
	if (s->queue_cap && (!bytes || bytes > s->queue_cap))
		bytes = s->queue_cap > bdp ? s->queue_cap : bdp;
	if (!bytes)
		return 0;
	return bytes > MIN_CLAMP_SEGMENTS * mss ? bytes : MIN_CLAMP_SEGMENTS * mss;
}

/* The egress queue refused a segment: it is full with what is outstanding on the hop now. */
static void note_queue_full(struct flow *f, uint64_t now)
{
	struct snoop_state *s = &f->st.snoop;
	uint64_t outstanding, mss = snoop_mss(f);

	if (!s->ack_seen)
		return;
	/*
	 * The latest refusal, not the smallest: the queue also holds local
	 * repairs and copies that the outstanding bytes do not count, so one
	 * refusal can understate it.
	 */
	outstanding = (uint32_t)(s->snd_max - s->last_ack);
	s->queue_cap = outstanding > mss ? outstanding - mss : 0;
	s->queue_cap_ns = now;
}

/* Remember when an ACK with this TSval went to the fixed host. */
static void note_forwarded_ts(struct snoop_state *s, const struct pkt *p, uint64_t now)
{
	uint8_t last = (uint8_t)((s->ts_i + SNOOP_TS_RING - 1) % SNOOP_TS_RING);

	if (!p->has_ts || (s->ts_fwd_ns[last] && s->ts_fwd[last] == p->tsval))
		return;
	s->ts_fwd[s->ts_i] = p->tsval;
	s->ts_fwd_ns[s->ts_i] = now;
	s->ts_i = (uint8_t)((s->ts_i + 1) % SNOOP_TS_RING);
}

/* Data echoing a TSval we passed on: a sample of the wired round trip. */
static void wired_rtt_sample(struct snoop_state *s, const struct pkt *p, uint64_t now)
{
	uint8_t i;

	if (!p->has_ts)
		return;
	for (i = 0; i < SNOOP_TS_RING; i++) {
		uint64_t r;

		if (!s->ts_fwd_ns[i] || s->ts_fwd[i] != p->tsecr)
			continue;
		r = now - s->ts_fwd_ns[i];
		if (!s->wired_rtt_ns || r <= s->wired_rtt_ns || now - s->wired_rtt_stamp > MIN_RTT_WINDOW_NS) {
			s->wired_rtt_ns = r;
			s->wired_rtt_stamp = now;
		}
		s->ts_fwd_ns[i] = 0;	/* one sample per ACK: later echoes wait longer */
		return;
	}
}

/* Cut the window of an ACK going to the sender to the clamp, never moving its right edge back. */
static void clamp_window(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx, struct pep_out *out)
{
	struct snoop_state *s = &f->st.snoop;
	int shift = conn_wh_shift(&f->conn);
	uint64_t clamp = clamp_bytes(f, ctx->cfg), raw, floor_raw = 1;

	if (out->verdict != VERDICT_ACCEPT || shift < 0)
		return;
	raw = p->window;
	if (clamp && ((uint64_t)p->window << shift) > clamp) {
		raw = (clamp + (1u << shift) - 1) >> shift;
		if (s->right_edge_valid && seq_after(s->right_edge, p->ack))
			floor_raw = ((uint64_t)(s->right_edge - p->ack) + (1u << shift) - 1) >> shift;
		if (raw < floor_raw)
			raw = floor_raw;
		if (raw < p->window) {
			out->set_window = true;
			out->window = (uint16_t)raw;
			COUNT(ctx, f, window_clamped, 1);
		} else {
			raw = p->window;
		}
	}
	s->right_edge = p->ack + (uint32_t)(raw << shift);
	s->right_edge_valid = true;
}

/* A standing queue on the hop: time to tell the sender (see the top of the file)? */
static bool congestion_signal_due(struct flow *f, const struct pep_config *cfg, uint64_t now)
{
	struct snoop_state *s = &f->st.snoop;
	/* the queue the window clamp allows on purpose is not congestion */
	uint64_t allowed = clamp_bytes(f, cfg) ? (CLAMP_GAIN - 1) * path_min_rtt(s) : 0;

	if (!cfg->aqm_target_ns || !s->rtt_valid || s->signal_pending)
		return false;
	if (s->last_rtt_ns < s->min_rtt_ns + allowed + cfg->aqm_target_ns) {
		s->above_since = 0;
		return false;
	}
	if (!s->above_since)
		s->above_since = now;
	if (!s->signal_ns)
		return true;	/* the first standing queue is slow start overshooting: at once */
	return now - s->above_since >= cfg->aqm_interval_ns && now - s->signal_ns >= cfg->aqm_interval_ns;
}

static void on_data(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx, struct pep_out *out)
{
	struct snoop_state *s = &f->st.snoop;
	const struct pep_config *cfg = ctx->cfg;
	uint32_t end = pkt_end(p);
	struct seg *g = NULL;
	enum cache_insert r;
	bool sender_rtx, refused;

	COUNT(ctx, f, data_packets, 1);
	if (p->flags & TCPF_SYN) {
		s->snd_max = end;
		s->data_seen = true;
		return;
	}
	wired_rtt_sample(s, p, ctx->now);
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
			return;
		}
		if (!h || h->flags & SEG_NOT_OURS) {
			/* the sender recovers a hole left to it: it is in recovery until all it sent is acknowledged */
			s->sender_recovering = true;
			s->sender_recover = s->snd_max;
		}
	}
	if (!sender_rtx && congestion_signal_due(f, cfg, ctx->now)) {
		/* dropped here and never cached: its loss, and the congestion, are the sender's to see */
		out->verdict = VERDICT_DROP;
		start_signal(s, p->seq, ctx);
		s->signal_dropped = true;
		s->snd_max = end;
		COUNT(ctx, f, congestion_signals, 1);
		return;
	}
	r = segq_insert(&f->cache, ctx->budget, p->seq, end, p->data, p->len, &g);
	switch (r) {
	case CACHE_INSERTED:
		COUNT(ctx, f, cached_packets, 1);
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
			if (!(s->signal_seq == p->seq && s->signal_dropped))
				g->credit_order = 0;
		}
		break;
	case CACHE_DUPLICATE:
		/*
		 * The sender's own retransmission of a segment cached here: keep
		 * its bytes, not ours (its timestamp is current; ours may be old
		 * enough for the receiver's PAWS check to discard).
		 */
		if (segq_replace(&f->cache, ctx->budget, g, end, p->data, p->len) < 0) {
			/* no room for the new copy: the old one must not stay; pass it uncached */
			segq_remove(&f->cache, ctx->budget, (uint32_t)segq_find(&f->cache, p->seq));
			COUNT(ctx, f, cache_full, 1);
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
		COUNT(ctx, f, cache_full, 1);
		break;
	}
	if (g && cfg->forward == FORWARD_INJECT) {
		/* pepd sends the copy itself: the egress queue's answer tells congestion from wireless loss */
		out->verdict = VERDICT_INJECT;
		out->inject_seq = g->seq;
	}
	if (seq_after(end, s->snd_max))
		s->snd_max = end;
}

void snoop_sent(struct flow *f, uint32_t seq, bool queued, const struct pep_ctx *ctx)
{
	long i = segq_find(&f->cache, seq);
	struct seg *g;

	if (queued || i < 0)
		return;
	g = segq_at(&f->cache, (uint32_t)i);
	COUNT(ctx, f, queue_drops, 1);
	if (g->local_rtx) {
		g->local_rtx--;	/* a round that never left this box does not count */
		/* with rtx_priority it had a queue of its own, which says nothing about the data's */
		if (ctx->cfg->rtx_priority)
			return;
	}
	note_queue_full(f, ctx->now);
	if (!f->st.snoop.signal_pending && !(g->flags & SEG_QUEUE_DROP)) {
		/*
		 * This box's own queue is full: congestion.  Repairing every such
		 * loss locally would hide it, and the sender would never slow
		 * down; exposing every one would cost it a burst of
		 * retransmissions.  One per episode is left to it (its dupacks
		 * and SACK blocks pass): the episode's signal.  The others are
		 * repaired here as soon as the queue has room.
		 */
		g->flags |= SEG_QUEUE_DROP;
		start_signal(&f->st.snoop, g->seq, ctx);
		COUNT(ctx, f, congestion_signals, 1);
	}
}

static void on_new_ack(const struct snoop_policy *pol, struct flow *f, const struct pkt *p,
		       const struct pep_ctx *ctx, struct pep_out *out, bool sackm)
{
	struct snoop_state *s = &f->st.snoop;
	struct seg *sample = NULL, *h;
	uint32_t discount = 0, i, prev_dupacks = s->dupacks;

	for (i = 0; i < f->cache.count; i++) {
		struct seg *g = segq_at(&f->cache, i);

		if (seq_after(g->end, p->ack))
			break;
		if (!(g->flags & SEG_SENDER_RTX))
			pol->first_tx_outcome(f, ctx, g->local_rtx > 0);
		credit_arrival(s, g);
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
	if (sample && sample->local_rtx == 0 && !(sample->flags & SEG_SENDER_RTX) && ctx->now >= sample->last_tx_ns)
		rtt_sample(s, ctx->now - sample->last_tx_ns, ctx->now);
	segq_ack(&f->cache, ctx->budget, p->ack);
	s->acked_bytes += p->ack - s->last_ack;
	rate_update(s, ctx->now);
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
	bool only_dsack = sackm && p->nsack == 1 && first_block_is_dsack(p);
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
	}
	handled = h && !(h->flags & (SEG_NOT_OURS | SEG_SENDER_RTX));
	if (handled && sackm && p->nsack) {
		uint32_t exposed;

		handled = holes_cached(f, p, &exposed);
	}
	/* without SACK, the paper's rule for the first round: rtx_thresh dupacks */
	if (!sackm && h && h->local_rtx == 0 && may_retransmit(h) && !(h->flags & SEG_SENDER_RTX) &&
	    s->dupacks >= ctx->cfg->rtx_thresh)
		retransmit(pol, f, h, ctx, out, false);
	detect_losses(pol, f, ctx, out, sackm);
	/* a hole given up just now belongs to the sender: let this dupack through */
	if (handled && h->flags & SEG_NOT_OURS)
		handled = false;
	/* the link-layer stand-in: repair here, but the sender sees every dupack */
	if (!ctx->cfg->drop_dupacks)
		handled = false;
	if (handled || ours) {
		out->verdict = VERDICT_DROP;
		COUNT(ctx, f, dupacks_dropped, 1);
	} else {
		COUNT(ctx, f, dupacks_forwarded, 1);
	}
}

static void on_ack(const struct snoop_policy *pol, struct flow *f, const struct pkt *p, const struct pep_ctx *ctx,
		   struct pep_out *out)
{
	struct snoop_state *s = &f->st.snoop;
	bool sackm = sack_mode(f, ctx);
	bool pure = p->payload_len == 0 && !(p->flags & (TCPF_SYN | TCPF_FIN | TCPF_RST));

	COUNT(ctx, f, ack_packets, 1);
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
		if (s->data_seen && seq_after(p->ack, s->snd_max))
			s->snd_max = p->ack;
		segq_ack(&f->cache, ctx->budget, p->ack);
		return;
	}
	if (seq_after(p->ack, s->last_ack)) {
		on_new_ack(pol, f, p, ctx, out, sackm);
		if (sackm)
			sack_mark(f, p);
		detect_losses(pol, f, ctx, out, sackm);
		maybe_hide_sack(f, p, ctx, out, sackm);
		if (!sackm && pure && ctx->cfg->drop_dupacks && s->sender_recovering && partial_ack_ours(f, p->ack)) {
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
			sack_mark(f, p);
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
		maybe_hide_sack(f, p, ctx, out, sackm);
	} else if (pure) {
		/* older than an ACK already seen: reordered on the way up, nothing new */
		out->verdict = VERDICT_DROP;
		COUNT(ctx, f, stale_acks_dropped, 1);
	}
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
			note_forwarded_ts(&f->st.snoop, p, ctx->now);
			clamp_window(f, p, ctx, out);
		}
	}
	rearm(f, ctx, out);
}

void snoop_timer(const struct snoop_policy *pol, struct flow *f, const struct pep_ctx *ctx, struct pep_out *out)
{
	struct snoop_state *s = &f->st.snoop;
	uint64_t rto = snoop_rto(s, ctx->cfg);
	struct seg *h = timer_head(f);

	if (h && ctx->now >= h->last_tx_ns + rto) {
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

	jo_bool(j, "sack", sack_mode(f, ctx));
	jo_dbl(j, "srtt_ms", s->rtt_valid ? (double)s->srtt_ns / 1e6 : 0.0);
	jo_dbl(j, "rttvar_ms", s->rtt_valid ? (double)s->rttvar_ns / 1e6 : 0.0);
	jo_dbl(j, "rto_ms", (double)snoop_rto(s, ctx->cfg) / 1e6);
	jo_dbl(j, "min_rtt_ms", (double)s->min_rtt_ns / 1e6);
	jo_dbl(j, "wired_rtt_ms", (double)s->wired_rtt_ns / 1e6);
	jo_dbl(j, "rate_mbps", (double)max_rate(s) * 8 / 1e6);
	jo_u64(j, "window_clamp_bytes", clamp_bytes(f, ctx->cfg));
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
