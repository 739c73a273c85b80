/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Snoop's state machine, shared by the snoop and snoop+ filters: they
 * differ only in how many extra copies each local retransmission carries,
 * which a policy decides.  The machine is four files, one concern each:
 * filter_snoop.c (the cache, local retransmission, loss inference, timers),
 * filter_snoop_sack.c, filter_snoop_pacing.c, filter_snoop_congestion.c;
 * the second half of this header is what they call in each other.
 */
#ifndef PEPD_FILTER_SNOOP_H
#define PEPD_FILTER_SNOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "filter.h"
#include "filter_state.h"
#include "flow.h"

struct snoop_policy {
	/* extra copies (0..3) for the next local retransmission of f */
	uint8_t (*extra_copies)(struct flow *f, const struct pep_ctx *ctx);
	/* a first transmission left the cache: lost (needed a local retransmission) or not */
	void (*first_tx_outcome)(struct flow *f, const struct pep_ctx *ctx, bool lost);
};

void snoop_init(struct flow *f, const struct pep_ctx *ctx);
void snoop_packet(const struct snoop_policy *pol, struct flow *f, const struct pkt *p, enum pep_dir dir,
		  const struct pep_ctx *ctx, struct pep_out *out);
void snoop_timer(const struct snoop_policy *pol, struct flow *f, const struct pep_ctx *ctx, struct pep_out *out);
void snoop_sent(struct flow *f, uint32_t seq, bool queued, const struct pep_ctx *ctx);
void snoop_report(const struct flow *f, const struct pep_ctx *ctx, struct json_out *j);

/* The wireless host's segment size (1448 until its SYN is seen). */
uint64_t snoop_mss(const struct flow *f);

/* The local retransmission timeout for the next expiry, backoff included. */
uint64_t snoop_rto(const struct snoop_state *s, const struct pep_config *cfg);

/*
 * Would `copies` extra copies go out on an idle link?  True while the hop's
 * latest RTT stands less than the time to send them (at the measured
 * delivery rate) above its minimum; false while a queue stands, where each
 * copy takes the place of new data, or while the hop is not measured yet.
 */
bool snoop_copies_are_free(const struct snoop_state *s, uint64_t mss, uint8_t copies);

/* Adaptive Snoop+: feed one first-transmission outcome into the estimator (and re-choose c). */
void loss_estimator_update(struct loss_estimator *e, bool lost, uint32_t window, double target);

#define SNOOP_MAX_EXTRA_COPIES 3
#define SNOOP_MAX_BACKOFF 6
/*
 * Local rounds for a cached SYN-ACK at most: a third loss in a row is
 * rarer than 1 in 10^4 at 3 % loss, while every round is one more packet
 * a client that never answers (a SYN flood from the wireless side) draws
 * from the base station.
 */
#define SNOOP_SYNACK_ROUNDS 2

/* ---------------------------------------------------------------- between the snoop files */

#define NS_PER_MS 1000000ULL
#define NS_PER_S 1000000000ULL
#define SNOOP_MIN_RTT_WINDOW_NS (10 * NS_PER_S)	/* an older minimum may be renewed (rtt_sample) */

/* Does this flow use the receiver's SACK blocks? */
static inline bool snoop_sack_mode(const struct flow *f, const struct pep_ctx *ctx)
{
	return ctx->cfg->use_sack && conn_sack_ok(&f->conn);
}

/* drop_dupacks for this flow: auto keeps them from a sender without SACK only */
static inline bool snoop_drops_dupacks(const struct flow *f, const struct pep_ctx *ctx)
{
	if (ctx->cfg->drop_dupacks == DROP_DUPACKS_AUTO)
		return !conn_sack_ok(&f->conn);
	return ctx->cfg->drop_dupacks == DROP_DUPACKS_TRUE;
}

/*
 * A segment is known to have arrived: so has every transmission before the
 * one it credits.  Unless that is a repair sent less than the hop's
 * minimum round trip ago, which cannot have drawn the ACK: an earlier copy
 * did, late (reordered on the hop), and says nothing of what was sent
 * after it (RACK's rule for a retransmitted segment, tcp_rack_advance);
 * credited from the repair, the late copy made everything sent since the
 * repair look lost.  Also counts a segment reorder_window held back that
 * arrived without a repair: it was only reordered.
 */
static inline void snoop_arrived(struct flow *f, const struct seg *g, const struct pep_ctx *ctx)
{
	struct snoop_state *s = &f->st.snoop;

	if ((g->flags & SEG_REORDER_HELD) && !g->local_rtx)
		COUNT(ctx, f, reorder_saved, 1);
	if (g->local_rtx && g->credit_order >= g->tx_first && s->min_rtt_ns &&
	    ctx->now - g->last_tx_ns < s->min_rtt_ns) {
		COUNT(ctx, f, repairs_unneeded, 1);
		return;
	}
	if (g->credit_order > s->delivered) {
		s->delivered = g->credit_order;
		s->delivered_rtt_ns = ctx->now > g->last_tx_ns ? ctx->now - g->last_tx_ns : 0;
	}
}

/* filter_snoop_sack.c: reading the receiver's blocks, and what the sender is shown */
bool snoop_first_block_is_dsack(const struct pkt *p);
void snoop_sack_mark(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx);
bool snoop_holes_cached(const struct flow *f, const struct pkt *p, uint32_t *exposed);
void snoop_present_sack(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx, struct pep_out *out,
			bool sackm);

/* filter_snoop_pacing.c: the hop's delivery rate, the path's round trip, the window clamp */
void snoop_count_delivered(struct snoop_state *s, uint32_t advance, uint32_t reported, bool all_acked);
void snoop_credit_dupack(struct flow *f, uint64_t now);
void snoop_rate_update(struct snoop_state *s, uint64_t now);
uint64_t snoop_max_rate(const struct snoop_state *s);
uint64_t snoop_path_min_rtt(const struct snoop_state *s);
uint64_t snoop_clamp_queue_ns(const struct flow *f, const struct pep_config *cfg);
uint64_t snoop_clamp_bytes(const struct flow *f, const struct pep_config *cfg);
bool snoop_note_queue_full(struct flow *f, const struct pep_ctx *ctx);
void snoop_note_forwarded_ts(struct snoop_state *s, const struct pkt *p, uint64_t now);
void snoop_wired_rtt_sample(struct snoop_state *s, const struct pkt *p, uint64_t now);
void snoop_clamp_window(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx, struct pep_out *out);
void snoop_clamp_generated_acks(struct flow *f, const struct pep_ctx *ctx, struct pep_out *out);
bool snoop_repair_window_opens(const struct flow *f, const struct pkt *p, const struct pep_ctx *ctx);

/* filter_snoop_congestion.c: one congestion signal per episode */
void snoop_start_signal(struct snoop_state *s, uint32_t seq, const struct pep_ctx *ctx);
bool snoop_signal_due(struct flow *f, const struct pep_config *cfg, uint64_t now);
bool snoop_leave_egress_drop(struct flow *f, struct seg *g, const struct pep_ctx *ctx);

#endif
