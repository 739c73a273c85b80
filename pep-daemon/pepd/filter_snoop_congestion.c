// SPDX-License-Identifier: GPL-2.0-only
/*
 * Congestion.  Hiding wireless losses also hides congestion: a sender that
 * never sees a loss grows its window until this box's egress queue
 * overflows, in bursts.  Two signals reach it instead:
 *   - forward = inject: pepd sends the cached data itself, and a segment
 *     the egress queue refuses (ENOBUFS) is a congestion loss, left to the
 *     sender (its dupacks and SACK blocks pass), unless the window clamp
 *     let the window past what the queue holds (snoop_note_queue_full:
 *     the clamp is capped instead);
 *   - aqm_target: when the hop's RTT has stood more than aqm_target above
 *     its minimum for aqm_interval (a standing queue), the next new segment
 *     is dropped, uncached, as a congestion signal, once per sender
 *     reaction (CoDel's idea with one drop per episode): the sender halves
 *     its window with one retransmission instead of losing a burst to tail
 *     drop, most of all when slow start overshoots;
 *   - egress_drops: when the qdisc in front of the radio dropped packets
 *     (fq_codel's CoDel does so on purpose, after pepd forwarded them), the
 *     next loss found is left to the sender, once per sender reaction: it
 *     may be one of those drops, and the sender must hear of them.
 */
#include "filter_snoop.h"
#include "flow.h"
#include "seq.h"

void snoop_start_signal(struct snoop_state *s, uint32_t seq, const struct pep_ctx *ctx)
{
	s->signal_dropped = false;
	s->signal_pending = true;
	s->signal_seq = seq;
	s->signal_ns = ctx->now;
	s->above_since = 0;
}

/* A standing queue on the hop: time to tell the sender (see the top of the file)? */
bool snoop_signal_due(struct flow *f, const struct pep_config *cfg, uint64_t now)
{
	struct snoop_state *s = &f->st.snoop;
	/* the queue the window clamp allows on purpose is not congestion */
	uint64_t allowed = snoop_clamp_bytes(f, cfg) ? snoop_clamp_queue_ns(f, cfg) : 0;

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

void snoop_sent(struct flow *f, uint32_t seq, bool queued, const struct pep_ctx *ctx)
{
	long i = segq_find(&f->cache, seq);
	struct seg *g;

	if (queued || i < 0)
		return;
	g = segq_at(&f->cache, (uint32_t)i);
	COUNT(ctx, f, queue_drops, 1);
	/* last_tx_ns is now a send that never happened: an ACK for an earlier copy would time it */
	g->flags |= SEG_UNSENT_TX;
	if (g->local_rtx) {
		g->local_rtx--;	/* a round that never left this box does not count */
		/* nor may an ACK of an earlier copy credit its place in the order */
		if (g->credit_order >= g->tx_first)
			g->credit_order = 0;
		/* with rtx_priority it had a queue of its own, which says nothing about the data's */
		if (ctx->cfg->rtx_priority)
			return;
	}
	if (snoop_note_queue_full(f, ctx)) {
		COUNT(ctx, f, queue_cap_refusals, 1);
		return;	/* the clamp's overshoot, now capped: repaired here as the queue has room */
	}
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
		snoop_start_signal(&f->st.snoop, g->seq, ctx);
		COUNT(ctx, f, congestion_signals, 1);
	}
}

/*
 * egress_drops (see the top of the file): leave g's loss to the sender if
 * the egress qdisc dropped anything since g left and no signal is under
 * way.  Which packet the qdisc dropped is not known, only that it did: one
 * loss per episode is enough for the sender to react, the rest are
 * repaired here.
 */
bool snoop_leave_egress_drop(struct flow *f, struct seg *g, const struct pep_ctx *ctx)
{
	struct snoop_state *s = &f->st.snoop;

	if (!ctx->cfg->egress_drops || !ctx->egress_drop_ns || s->signal_pending)
		return false;
	/* a round of ours, or the sender's own retransmission: not the first loss of new data */
	if (g->local_rtx || g->flags & (SEG_SENDER_RTX | SEG_NOT_OURS))
		return false;
	if (ctx->egress_drop_ns <= g->last_tx_ns)
		return false;
	g->flags |= SEG_QUEUE_DROP;
	snoop_start_signal(s, g->seq, ctx);
	COUNT(ctx, f, egress_drop_signals, 1);
	return true;
}
