// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcp_ddack's per-flow state machine (ddack_dda.h): pure C, linked into
 * the module and into the userspace harness tests/dda_harness.c.
 */
#ifdef __KERNEL__
#include <linux/limits.h>
#include <linux/math64.h>
#endif

#include "ddack_dda.h"
#include "ddack_estimator.h"

#define DDACK_HOLD_MAX_NS	((s64)DDACK_HOLD_MAX_US * DDACK_NS_PER_US)

static s64 ddack_after_us(s64 now, s64 then)
{
	return div_s64(now - then, DDACK_NS_PER_US);
}

static bool ddack_dda_in_episode(const struct ddack_dda *dda)
{
	return dda->state == DDACK_IMMEDIATE || dda->state == DDACK_HOLDING ||
	       dda->state == DDACK_RELEASED;
}

/* The segment's ACK and window are the reference for the next dupack. */
static void ddack_dda_reference(struct ddack_dda *dda,
				const struct ddack_seg *seg)
{
	dda->last_ack = seg->ack;
	dda->last_win = seg->win;
}

/*
 * The cumulative ACK advanced: the hole is filled.  Held dupacks are
 * discarded and the timer stopped; the fill time is a sample for
 * adaptive d unless it was the sender's doing.  True when the flow steps
 * aside now: its released held episodes outnumber those filled within d
 * by aside_unfilled.
 */
static bool ddack_dda_episode_end(struct ddack_dda *dda,
				  const struct ddack_params *params,
				  const struct ddack_seg *seg,
				  struct ddack_decision *out)
{
	bool released = dda->state == DDACK_RELEASED;
	s64 fill_us;

	if (!ddack_dda_in_episode(dda))
		return false;
	if (seg->held) {
		out->drop = DDACK_DISCARD_HELD;
		out->cancel = true;
		/* Filled in time, unless pacing had begun the release. */
		if (!released) {
			out->events |= DDACK_EV_FILLED;
			if (dda->filled_eps < U16_MAX)
				dda->filled_eps++;
		}
	}
	/*
	 * Released: the hole outlived d, so the sender repaired it (or
	 * will); the hold only delayed that.  A fill within d is evidence
	 * of local repair (or reordering), but not proof: a sender in
	 * NewReno recovery retransmits the next hole at the partial ACK
	 * that ends the previous episode, and that hole may fill within d
	 * too.  So fills offset releases, one for one, rather than veto
	 * the step aside.
	 */
	if (released && dda->released_eps < U16_MAX)
		dda->released_eps++;
	if (params->adaptive) {
		/*
		 * A fill that comes more than half a round trip after our
		 * release is most likely the sender's retransmission,
		 * prompted by what we released: it measures the sender, not
		 * the local repair that d has to wait for.  Counting it
		 * would make d grow with every congestion loss (fill = d +
		 * RTT), without bound.
		 */
		if (released &&
		    (!seg->rcv_rtt_us ||
		     ddack_after_us(seg->now, dda->released_at) >
		     seg->rcv_rtt_us / 2)) {
			out->events |= DDACK_EV_ADAPT_IGNORED;
		} else {
			fill_us = ddack_after_us(seg->now, dda->episode_start);
			if (fill_us > DDACK_EST_MAX_US)
				fill_us = DDACK_EST_MAX_US;
			out->fill_us = (u32)fill_us;
			out->events |= DDACK_EV_ADAPT_SAMPLE;
		}
	}
	dda->dupcnt = 0;
	if (!params->aside_unfilled ||
	    dda->released_eps < (u32)dda->filled_eps + params->aside_unfilled)
		return false;
	out->events |= DDACK_EV_ASIDE_UNFILLED;
	return true;
}

/* A dupack of an episode still sending or holding: at once, or held. */
static void ddack_dda_dupack(struct ddack_dda *dda,
			     const struct ddack_params *params,
			     const struct ddack_seg *seg,
			     struct ddack_decision *out)
{
	u32 threshold = params->threshold;
	s64 delay_ns;

	if (params->sack_mode == DDACK_SACK_HOLD && seg->has_sack)
		threshold = 0;
	if (dda->dupcnt <= threshold || !params->delay_us) {
		out->events |= DDACK_EV_IMMEDIATE;
		return;
	}
	if (!seg->may_hold) {
		out->events |= DDACK_EV_IMMEDIATE | DDACK_EV_LIMITED;
		return;
	}
	out->verdict = DDACK_HOLD;
	if (dda->state != DDACK_HOLDING || !seg->held) {
		/* d counts from the first held dupack, as in the paper. */
		delay_ns = (s64)params->delay_us * DDACK_NS_PER_US;
		if (delay_ns > DDACK_HOLD_MAX_NS)
			delay_ns = DDACK_HOLD_MAX_NS;
		dda->state = DDACK_HOLDING;
		dda->hold_start = seg->now;
		dda->release_at = seg->now + delay_ns;
		out->arm = true;
	}
	out->evict = seg->held + 1 > params->max_held;
}

/*
 * A flow starts (its first pure ACK, or its 4-tuple on a new socket):
 * @seg is the reference for the next dupack.  With sack_mode = aside a
 * connection that negotiated SACK is stepped aside for at once.  Returns
 * the events to count.
 */
u32 ddack_dda_start(struct ddack_dda *dda, const struct ddack_params *params,
		    const struct ddack_seg *seg)
{
	*dda = (struct ddack_dda){ .state = DDACK_IDLE };
	ddack_dda_reference(dda, seg);
	if (params->sack_mode == DDACK_SACK_ASIDE && seg->sack_ok) {
		dda->state = DDACK_ASIDE;
		return DDACK_EV_ASIDE_SACK;
	}
	return 0;
}

/* One outgoing segment of the flow's socket. */
struct ddack_decision ddack_dda_segment(struct ddack_dda *dda,
					const struct ddack_params *params,
					const struct ddack_seg *seg)
{
	struct ddack_decision out = { .verdict = DDACK_PASS };

	if (seg->ends_flow) {
		out.drop = DDACK_FLUSH_HELD;
		out.cancel = true;
		dda->state = DDACK_CLOSED;
		dda->dupcnt = 0;
		return out;
	}
	if (seg->new_socket) {
		/* The 4-tuple was reused by a new connection: start over. */
		out.drop = DDACK_FLUSH_HELD;
		out.cancel = true;
		out.events |= ddack_dda_start(dda, params, seg);
		goto strip_check;
	}
	if (dda->state == DDACK_CLOSED || dda->state == DDACK_ASIDE)
		return out;

	if (airtcp_after(seg->ack, dda->last_ack)) {
		if (ddack_dda_episode_end(dda, params, seg, &out))
			dda->state = DDACK_ASIDE;
		else
			dda->state = DDACK_IDLE;
		ddack_dda_reference(dda, seg);
		goto strip_check;
	}
	/* Data with a piggy-backed ACK, or an older ACK: not ours to touch. */
	if (!seg->pure_ack || seg->ack != dda->last_ack)
		return out;
	if (seg->win != dda->last_win) {
		/* A window update is not a duplicate (RFC 5681, Linux). */
		dda->last_win = seg->win;
		goto strip_check;
	}

	out.events |= DDACK_EV_DUPACK;
	if (dda->state == DDACK_IDLE) {
		dda->state = DDACK_IMMEDIATE;
		dda->episode_start = seg->now;
		out.events |= DDACK_EV_EPISODE;
	}
	dda->dupcnt++;
	if (dda->state == DDACK_RELEASED) {
		out.events |= DDACK_EV_IMMEDIATE;
		return out;
	}
	ddack_dda_dupack(dda, params, seg, &out);
	if (out.verdict == DDACK_HOLD)
		return out;

strip_check:
	/*
	 * sack_mode strip/hold: until this episode's dupacks are released,
	 * no ACK that leaves now may announce an open hole with SACK blocks
	 * (early dupacks, window updates, an ACK filling one hole of two);
	 * a RACK sender would start recovery from any of them.  SACK blocks
	 * at or below the cumulative ACK (D-SACK alone) pass untouched.
	 */
	out.strip = (params->sack_mode == DDACK_SACK_STRIP ||
		     params->sack_mode == DDACK_SACK_HOLD) && params->delay_us &&
		    seg->sack_hole && dda->state != DDACK_RELEASED &&
		    dda->state != DDACK_ASIDE;
	return out;
}

/*
 * The flow's timer fired at @now with @held ACKs held.  A timer of an
 * earlier episode whose cancel raced with it never releases before this
 * episode's deadline; nothing stays held past DDACK_HOLD_MAX_US from the
 * episode's first hold, whatever the pacing.
 */
struct ddack_release ddack_dda_timer(struct ddack_dda *dda, s64 now, u32 held,
				     u32 pace_us)
{
	struct ddack_release out = { 0 };
	s64 cap = dda->hold_start + DDACK_HOLD_MAX_NS, next;

	if (!held)
		return out;
	if (dda->state != DDACK_HOLDING && dda->state != DDACK_RELEASED) {
		/* Held in no holding state: never keep it (not reached). */
		out.send = held;
		return out;
	}
	if (now < dda->release_at && now < cap) {
		out.rearm = true;
		return out;
	}
	if (dda->state == DDACK_HOLDING) {
		dda->state = DDACK_RELEASED;
		dda->released_at = now;
		out.first = true;
	}
	if (!pace_us || now >= cap) {
		out.send = held;
		out.capped = pace_us && held > 1;
		return out;
	}
	out.send = 1;
	if (held > 1) {
		next = now + (s64)pace_us * DDACK_NS_PER_US;
		dda->release_at = next < cap ? next : cap;
		out.rearm = true;
	}
	return out;
}

/*
 * Whether the garbage collector may remove the flow: closed, or idle for
 * @timeout_ns; a flow that holds ACKs only once they are past
 * DDACK_HOLD_MAX_US too (its timer should have sent them: the collector
 * does).
 */
bool ddack_dda_expired(const struct ddack_dda *dda, s64 now, s64 last_seen,
		       s64 timeout_ns, u32 held)
{
	if (dda->state == DDACK_CLOSED)
		return true;
	if (now - last_seen <= timeout_ns)
		return false;
	return !held || now >= dda->hold_start + DDACK_HOLD_MAX_NS;
}
