// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pacing.  The papers' senders had small windows (ns-2's 20 packets); a
 * Linux sender's window grows until something stops it.  With
 * window_clamp, the window field of ACKs passed to the sender is cut to
 * window_clamp_percent (150 %) of the path's bandwidth-delay product: the
 * hop's delivery rate (max of the last SNOOP_RATE_SAMPLES samples, one per
 * hop RTT) times the path's minimum round trip (the hop's, from cached
 * segments, plus the wired side's: from passing an ACK to the data that
 * echoes its timestamp).  The clamp bounds what the path holds, not what
 * lies above the cumulative ACK: while a hole is repaired here, what the
 * wireless host received above it is added (repair_window_updates), so the
 * sender goes on at the rate of arrivals and no longer needs a window of
 * two round trips (the old 200 %, BBR's cwnd gain) to get through a
 * repair.  The excess over one BDP absorbs the estimate's errors and ACK
 * compression.  The right edge never moves back (RFC 9293 3.8.6).  The
 * queue this allows is not congestion: aqm_target counts above it.  On a
 * short path that excess is a few milliseconds, less than the jitter of
 * the hop's deliveries and of the ACKs (a MAC's retries and aggregation),
 * and the link idles: the excess is at least window_clamp_min_queue at the
 * hop's rate, and window_clamp_min_segments where set (on a slow hop a
 * share of the round trip is only a few segments).
 * The congestion signals are then for what the clamp cannot see (other
 * traffic, a slower channel, a window that is not scaled as expected).
 * The egress queue's limit counts packets, the clamp bytes: with small
 * segments (Huang and Ferng's 512 bytes: 2 x BDP is 62 of them) the clamp
 * can be more than the queue holds, and a netem queue's limit also counts
 * the packets in its delay line (10 Mbit/s, 20 ms: 17 of 40).  So a
 * refusal also caps the clamp at what was outstanding on the hop then,
 * less an eighth (room for the local repairs that share the queue), plus
 * what the wired side holds at the hop's rate (never below one BDP), for
 * QUEUE_CAP_HOLD_NS after the last refusal: the window stops at what the
 * queue can take instead of overflowing it again every round trip.  That
 * first burst of refusals is the clamp's own overshoot, not congestion:
 * it is repaired here and the sender gets no signal (a CUBIC sender cut
 * to 0.7 of a window that was the clamp's sat below the BDP for seconds);
 * a refusal later, with the cap in force, is congestion and signals.
 */
#include "filter_snoop.h"
#include "flow.h"
#include "seq.h"

#define RATE_MIN_INTERVAL_NS (50 * NS_PER_MS)
#define MIN_CLAMP_SEGMENTS 4
#define QUEUE_CAP_HOLD_NS (10ULL * 1000000000ULL)
#define QUEUE_CAP_MARGIN_DIV 8

/*
 * What a new cumulative ACK adds to the bytes delivered: its advance, less
 * what SACK blocks (reported) or duplicate ACKs (dupack_credit) already
 * counted.  Counting only the cumulative ACK read its jump over data that
 * arrived before a sample began (at a partial ACK between two holes, at
 * the end of a fade) as a burst: the rate came out up to 2.8 x the hop's
 * and the clamp never held.
 */
void snoop_count_delivered(struct snoop_state *s, uint32_t advance, uint32_t reported, bool all_acked)
{
	uint32_t fresh = advance > reported ? advance - reported : 0;

	if (s->dupack_credit >= fresh) {
		s->dupack_credit -= fresh;
		fresh = 0;
	} else {
		fresh -= s->dupack_credit;
		s->dupack_credit = 0;
	}
	s->delivered_bytes += fresh;
	if (all_acked)
		s->dupack_credit = 0;	/* nothing above the ACK: a spurious dupack's credit ends here */
}

/*
 * Without SACK, a duplicate ACK is one segment's arrival above the hole
 * (RFC 5681's estimate), short of the hole itself and what is outstanding.
 */
void snoop_credit_dupack(struct flow *f, uint64_t now)
{
	struct snoop_state *s = &f->st.snoop;
	uint64_t mss = snoop_mss(f), above = (uint32_t)(s->snd_max - s->last_ack);

	if (s->dupack_credit + 2 * mss > above)
		return;
	s->dupack_credit += (uint32_t)mss;
	s->delivered_bytes += mss;
	snoop_rate_update(s, now);
}

/*
 * One delivery-rate sample per two hop RTTs (at least 50 ms), from the
 * bytes the wireless host reported receiving, each counted once when first
 * reported (SACK, a duplicate ACK, or the cumulative ACK).
 */
void snoop_rate_update(struct snoop_state *s, uint64_t now)
{
	uint64_t span = s->rtt_valid && 2 * s->srtt_ns > RATE_MIN_INTERVAL_NS ? 2 * s->srtt_ns : RATE_MIN_INTERVAL_NS;

	if (!s->rate_start_ns) {
		s->rate_start_ns = now;
		s->rate_start_bytes = s->delivered_bytes;
		return;
	}
	if (s->queue_cap && now - s->queue_cap_ns > QUEUE_CAP_HOLD_NS)
		s->queue_cap = 0;	/* no refusal for a while: the queue (or the path) may have grown */
	if (now - s->rate_start_ns < span)
		return;
	s->rate[s->rate_i] = (s->delivered_bytes - s->rate_start_bytes) * 1000000000ULL / (now - s->rate_start_ns);
	s->rate_i = (uint8_t)((s->rate_i + 1) % SNOOP_RATE_SAMPLES);
	if (s->rate_n < SNOOP_RATE_SAMPLES)
		s->rate_n++;
	s->rate_start_ns = now;
	s->rate_start_bytes = s->delivered_bytes;
}

uint64_t snoop_max_rate(const struct snoop_state *s)
{
	uint64_t m = 0;
	uint8_t i;

	for (i = 0; i < s->rate_n; i++)
		if (s->rate[i] > m)
			m = s->rate[i];
	return m;
}

bool snoop_copies_are_free(const struct snoop_state *s, uint64_t mss, uint8_t copies)
{
	uint64_t rate = snoop_max_rate(s), room_ns;

	if (!s->rtt_valid || !rate)
		return false;
	room_ns = (uint64_t)(copies + 1) * mss * 1000000000ULL / rate;
	return s->last_rtt_ns < s->min_rtt_ns + room_ns;
}

/* The path's minimum round trip, or 0 while unknown. */
uint64_t snoop_path_min_rtt(const struct snoop_state *s)
{
	return s->wired_rtt_ns && s->min_rtt_ns ? s->wired_rtt_ns + s->min_rtt_ns : 0;
}

uint64_t snoop_mss(const struct flow *f)
{
	return f->conn.max_payload ? f->conn.max_payload : 1448;
}

/*
 * The queue the clamp allows beyond one BDP, as time: window_clamp_percent's
 * share of the path's minimum round trip, never less than
 * window_clamp_min_queue nor window_clamp_min_segments at the hop's rate;
 * 0 while the path is unknown.
 */
uint64_t snoop_clamp_queue_ns(const struct flow *f, const struct pep_config *cfg)
{
	const struct snoop_state *s = &f->st.snoop;
	uint64_t path = snoop_path_min_rtt(s), rate = snoop_max_rate(s), queue, segments;

	if (!path)
		return 0;
	queue = path * (cfg->window_clamp_percent - 100) / 100;
	if (queue < cfg->window_clamp_min_queue_ns)
		queue = cfg->window_clamp_min_queue_ns;
	if (rate && cfg->window_clamp_min_segments) {
		segments = cfg->window_clamp_min_segments * snoop_mss(f) * 1000000000ULL / rate;
		if (queue < segments)
			queue = segments;
	}
	return queue;
}

/* The window the sender may have in flight, bytes; 0 while nothing is known. */
uint64_t snoop_clamp_bytes(const struct flow *f, const struct pep_config *cfg)
{
	const struct snoop_state *s = &f->st.snoop;
	uint64_t mss = snoop_mss(f), bytes = 0, bdp = 0;

	if (!cfg->window_clamp)
		return 0;
	if (s->rate_n >= 2 && snoop_path_min_rtt(s)) {
		uint64_t rate = snoop_max_rate(s), floor;

		bdp = rate * snoop_path_min_rtt(s) / 1000000000ULL;
		bytes = bdp * cfg->window_clamp_percent / 100;
		floor = bdp + rate * snoop_clamp_queue_ns(f, cfg) / 1000000000ULL;
		if (bdp && bytes < floor)
			bytes = floor;
	}
	if (s->queue_cap) {
		/*
		 * The refusal measured the hop; the sender's window also
		 * covers what is in flight on the wired side, at the hop's rate.
		 */
		uint64_t cap = s->queue_cap + snoop_max_rate(s) * s->wired_rtt_ns / 1000000000ULL;

		/* never below one BDP: a smaller window leaves the link idle whatever the queue */
		if (!bytes || bytes > cap)
			bytes = cap > bdp ? cap : bdp;
	}
	if (!bytes)
		return 0;
	return bytes > MIN_CLAMP_SEGMENTS * mss ? bytes : MIN_CLAMP_SEGMENTS * mss;
}

/*
 * The egress queue refused a segment: it is full with what is outstanding
 * on the hop now.  Returns true when the refusal is the clamp's own
 * overshoot, learned here and no congestion signal: no cap was in force
 * (the clamp had let the window past what the queue holds), or the burst
 * that set the cap is still arriving (the right edge already granted never
 * moves back, so the sender fills it for about one round trip).
 */
bool snoop_note_queue_full(struct flow *f, const struct pep_ctx *ctx)
{
	struct snoop_state *s = &f->st.snoop;
	uint64_t outstanding, margin, cap, burst_ns, mss = snoop_mss(f);
	bool in_force, same_burst;

	if (!s->ack_seen)
		return false;
	outstanding = (uint32_t)(s->snd_max - s->last_ack);
	/* room for local repairs and jitter: sitting at the brink overflows again at the next repair */
	margin = outstanding / QUEUE_CAP_MARGIN_DIV > mss ? outstanding / QUEUE_CAP_MARGIN_DIV : mss;
	cap = outstanding > margin ? outstanding - margin : 0;
	in_force = s->queue_cap && ctx->now - s->queue_cap_ns <= QUEUE_CAP_HOLD_NS;
	burst_ns = 2 * ((s->rtt_valid ? s->srtt_ns : 0) + s->wired_rtt_ns);
	same_burst = in_force && ctx->now - s->queue_cap_since <= burst_ns;
	if (same_burst) {
		/* its later refusals count segments already refused, which the queue does not hold */
		if (cap > s->queue_cap)
			cap = s->queue_cap;
	} else {
		/*
		 * A new burst takes its own figure, not the smallest: the
		 * queue also holds local repairs and copies that the
		 * outstanding bytes do not count, so one burst can understate it.
		 */
		s->queue_cap_since = ctx->now;
	}
	s->queue_cap = cap;
	s->queue_cap_ns = ctx->now;
	if (!ctx->cfg->window_clamp || conn_wh_shift(&f->conn) < 0)
		return false;	/* no clamp reaches the sender: only a signal can slow it */
	return !in_force || same_burst;
}

/* Remember when an ACK with this TSval went to the fixed host. */
void snoop_note_forwarded_ts(struct snoop_state *s, const struct pkt *p, uint64_t now)
{
	uint8_t last = (uint8_t)((s->ts_i + SNOOP_TS_RING - 1) % SNOOP_TS_RING);

	if (!p->has_ts || (s->ts_fwd_ns[last] && s->ts_fwd[last] == p->tsval))
		return;
	s->ts_fwd[s->ts_i] = p->tsval;
	s->ts_fwd_ns[s->ts_i] = now;
	s->ts_i = (uint8_t)((s->ts_i + 1) % SNOOP_TS_RING);
}

/* Data echoing a TSval we passed on: a sample of the wired round trip. */
void snoop_wired_rtt_sample(struct snoop_state *s, const struct pkt *p, uint64_t now)
{
	uint8_t i;

	if (!p->has_ts)
		return;
	for (i = 0; i < SNOOP_TS_RING; i++) {
		uint64_t r;

		if (!s->ts_fwd_ns[i] || s->ts_fwd[i] != p->tsecr)
			continue;
		r = now - s->ts_fwd_ns[i];
		if (!s->wired_rtt_ns || r <= s->wired_rtt_ns || now - s->wired_rtt_stamp > SNOOP_MIN_RTT_WINDOW_NS) {
			s->wired_rtt_ns = r;
			s->wired_rtt_stamp = now;
		}
		s->ts_fwd_ns[i] = 0;	/* one sample per ACK: later echoes wait longer */
		return;
	}
}

/*
 * What the wireless host holds above the cumulative ACK while this box
 * repairs the hole there: the SACKed cached segments or, without SACK, one
 * segment per duplicate ACK.  Those bytes have left the hop, so the clamp
 * (a bound on what the path holds) lets the window reach past them.  0
 * when the hole is not this box's: the sender recovers it from the ACKs as
 * they are.
 */
static uint64_t delivered_above_ack(const struct flow *f, const struct pep_ctx *ctx)
{
	const struct snoop_state *s = &f->st.snoop;
	long i = segq_find(&f->cache, s->last_ack);
	uint64_t bytes = 0, above;
	uint32_t k;

	if (!ctx->cfg->repair_window_updates || i < 0 ||
	    segq_at(&f->cache, (uint32_t)i)->flags & (SEG_NOT_OURS | SEG_SENDER_RTX | SEG_SACKED))
		return 0;
	if (!snoop_sack_mode(f, ctx)) {
		/* every dupack is one arrival above the hole, and the hole itself is still on its way */
		above = (uint32_t)(s->snd_max - s->last_ack);
		above = above > snoop_mss(f) ? above - snoop_mss(f) : 0;
		bytes = (uint64_t)s->dupacks * snoop_mss(f);
		return bytes < above ? bytes : above;
	}
	for (k = (uint32_t)i; k < f->cache.count; k++) {
		const struct seg *g = segq_at(&f->cache, k);

		if (g->flags & SEG_SACKED)
			bytes += (uint32_t)(g->end - g->seq);
	}
	return bytes;
}

/*
 * The window field an ACK for p->ack may carry to the sender: its own, cut
 * to the clamp (plus what arrived above a hole this box repairs), never
 * moving the right edge back.
 */
static uint64_t window_to_sender(const struct flow *f, const struct pkt *p, const struct pep_ctx *ctx, int shift)
{
	const struct snoop_state *s = &f->st.snoop;
	uint64_t clamp = snoop_clamp_bytes(f, ctx->cfg), raw, floor_raw = 1;

	if (!clamp)
		return p->window;
	clamp += delivered_above_ack(f, ctx);
	if (((uint64_t)p->window << shift) <= clamp)
		return p->window;
	raw = (clamp + (1u << shift) - 1) >> shift;
	if (s->right_edge_valid && seq_after(s->right_edge, p->ack))
		floor_raw = ((uint64_t)(s->right_edge - p->ack) + (1u << shift) - 1) >> shift;
	if (raw < floor_raw)
		raw = floor_raw;
	return raw < p->window ? raw : p->window;
}

/* The window an ACK to the sender carries, raw; that ACK's right edge is the sender's from now on. */
static uint64_t pass_window(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx, int shift)
{
	struct snoop_state *s = &f->st.snoop;
	uint64_t raw = window_to_sender(f, p, ctx, shift);

	s->right_edge = p->ack + (uint32_t)(raw << shift);
	s->right_edge_valid = true;
	return raw;
}

/* Cut the window of an ACK going to the sender to the clamp, never moving its right edge back. */
void snoop_clamp_window(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx, struct pep_out *out)
{
	int shift = conn_wh_shift(&f->conn);
	uint64_t raw;

	if (out->verdict != VERDICT_ACCEPT || shift < 0)
		return;
	raw = pass_window(f, p, ctx, shift);
	if (raw < p->window) {
		out->set_window = true;
		out->window = (uint16_t)raw;
		COUNT(ctx, f, window_clamped, 1);
	}
}

/*
 * The ACKs this box generates (for the sender's retransmission of
 * acknowledged data; the D-SACKs of dsack_dropped_rtx) carry the clamped
 * window like those passed on.  With the wireless host's own window, each
 * moved the sender's right edge up to that window (MBs with Linux's
 * autotuning), which never moves back: the sender, no longer held by the
 * clamp, grew its window until this box's queue refused (on the 10 Mbit/s
 * hop 100 to 200 such ACKs a run, and windows of up to 1549 segments in
 * the sender's ss samples).
 */
void snoop_clamp_generated_acks(struct flow *f, const struct pep_ctx *ctx, struct pep_out *out)
{
	int shift = conn_wh_shift(&f->conn);
	uint32_t i;

	if (shift < 0)
		return;
	for (i = 0; i < out->nact; i++) {
		struct pep_action *a = &out->act[i];
		struct pkt p = { .ack = a->seq, .window = f->conn.wh_window };
		uint64_t raw;

		if (a->type != ACTION_SEND_ACK && a->type != ACTION_SEND_DSACK)
			continue;
		raw = pass_window(f, &p, ctx, shift);
		if (raw < p.window)
			a->window = (int32_t)raw;
	}
}

/*
 * Would a duplicate ACK of a hole repaired here, passed on, move the
 * window's right edge (so that the sender reads a window update, which
 * neither RFC 5681 nor Linux counts as a duplicate ACK)?  Only with the
 * clamp in force: then the sender's window, not its congestion window, is
 * what stops it while the hole stands, and without the update it falls
 * silent until the repair arrives.  With SACK only where the blocks are
 * hidden from it.
 */
bool snoop_repair_window_opens(const struct flow *f, const struct pkt *p, const struct pep_ctx *ctx)
{
	const struct snoop_state *s = &f->st.snoop;
	int shift = conn_wh_shift(&f->conn);

	if (!ctx->cfg->repair_window_updates || shift < 0 || !s->right_edge_valid || !snoop_clamp_bytes(f, ctx->cfg))
		return false;
	if (snoop_sack_mode(f, ctx) && !ctx->cfg->hide_sack)
		return false;
	return seq_after(p->ack + (uint32_t)(window_to_sender(f, p, ctx, shift) << shift), s->right_edge);
}
