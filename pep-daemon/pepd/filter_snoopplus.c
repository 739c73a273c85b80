// SPDX-License-Identifier: GPL-2.0-only
/*
 * Snoop+ (Huang and Ferng, 2006): Snoop whose every local retransmission
 * sends 1 + c copies back to back, so that one round recovers the segment
 * with probability 1 - P(all copies lost) instead of 1 - p.
 *
 * c is fixed (copies = 0..3) or adaptive (copies = auto), the paper's
 * suggested next step.  The adaptive policy keeps a two-state estimate of
 * the hop from the fate of first transmissions in sequence order: p, the
 * loss probability, and p_bb, the probability that a transmission right
 * after a lost one is lost too.  Copies go back to back, so with a bursty
 * channel they share the fate of their neighbours:
 *
 *     P(round fails) = p * p_bb^c
 *
 * and the policy picks the smallest c in 0..3 with P(round fails) at most
 * adaptive_target (default 0.001: with uniform loss that is c = 1 below
 * about 3 % and c = 2 above, the paper's crossover; under long bad periods
 * p_bb is high and c goes to 3, which the paper found best there).
 *
 * The copies are sent only while they are free: while the hop's RTT shows
 * no standing queue (snoop_copies_are_free).  The paper's senders had 20-
 * packet windows, below the path's BDP, so the link had idle time for
 * copies; a Linux sender fills the link (and pepd's clamp lets it keep a
 * BDP queued), and there every copy takes the place of new data: measured
 * on Huang and Ferng's channel, fixed c = 2 cost goodput (pep-daemon/README.rst).
 * Withheld copies are counted (copies_withheld).
 *
 * Copies go only to flows without SACK unless copies_sack is set (counted,
 * copies_withheld_sack).  Without SACK a sender's window stops at the hole
 * until its repair arrives, so a lost repair stalls the flow until the
 * local timer: that is what copies buy back.  A SACK sender goes on past
 * the hole (pepd shows it the receiver's SACKs and window updates), and a
 * lost repair costs it nothing the local timer does not mend, while each
 * copy takes the airtime of new data whenever the hop is busy, which
 * snoop_copies_are_free cannot see under a sender that keeps no queue
 * (BBR paces at the hop's rate): copies = 2 for SACK flows cost a BBR
 * sender 5-7 % of its goodput at 3 % uniform loss, the copies' share of
 * the airtime (Documentation/eval/pepd.rst).
 *
 * Why c >= 3 falsely triggers another round in the paper: Snoop counts
 * dupacks for the new ACK and retransmits at RTX_THRESH = 3.  When all
 * 1 + c copies arrive, the first one advances the ACK and each of the c
 * others is a duplicate segment that draws a duplicate ACK for the *new*
 * ACK; with c >= 3 these are RTX_THRESH dupacks for a segment that is not
 * lost.  pepd discounts them (discount_copy_dupacks: DSACK identifies them
 * exactly with SACK; without it the first c dupacks after a recovery are
 * not counted), so the false round does not happen unless the discount is
 * switched off, which reproduces the paper's behaviour.
 */

#include "filter_snoop.h"
#include "flow.h"
#include "json.h"

/* Adaptive choice needs this many samples before it trusts itself; until then c = 1. */
#define ADAPTIVE_MIN_SAMPLES 20
#define ADAPTIVE_START_COPIES 1

static uint8_t choose_copies(const struct loss_estimator *e, double target)
{
	double p_bb = e->samples_after_loss >= 5 ? e->p_bb : e->p;
	double fail = e->p;
	uint8_t c;

	if (e->samples < ADAPTIVE_MIN_SAMPLES)
		return ADAPTIVE_START_COPIES;
	for (c = 0; c < SNOOP_MAX_EXTRA_COPIES; c++) {
		if (fail <= target)
			return c;
		fail *= p_bb;
	}
	return SNOOP_MAX_EXTRA_COPIES;
}

void loss_estimator_update(struct loss_estimator *e, bool lost, uint32_t window, double target)
{
	double w = window ? 1.0 / window : 1.0;
	double x = lost ? 1.0 : 0.0;

	/* until the window fills, a plain average; then an exponential one */
	if (e->samples < window)
		w = 1.0 / (double)(e->samples + 1);
	e->p += w * (x - e->p);
	if (e->samples > 0 && e->prev_lost) {
		double wb = window ? 1.0 / window : 1.0;

		if (e->samples_after_loss < window)
			wb = 1.0 / (double)(e->samples_after_loss + 1);
		e->p_bb += wb * (x - e->p_bb);
		e->samples_after_loss++;
	}
	e->prev_lost = lost;
	e->samples++;
	e->copies = choose_copies(e, target);
}

static uint8_t plus_copies(struct flow *f, const struct pep_ctx *ctx)
{
	const struct snoop_state *s = &f->st.snoop;
	bool adaptive = ctx->cfg->copies == COPIES_AUTO;
	uint8_t copies = adaptive ? s->est.copies : (uint8_t)ctx->cfg->copies;

	if (!copies)
		return 0;
	if (!ctx->cfg->copies_sack && conn_sack_ok(&f->conn)) {
		COUNT(ctx, f, copies_withheld_sack, copies);
		return 0;
	}
	/* on a busy link a copy displaces new data: only an idle link's copies are free */
	if (adaptive && !snoop_copies_are_free(s, snoop_mss(f), copies)) {
		COUNT(ctx, f, copies_withheld, copies);
		return 0;
	}
	return copies;
}

static void plus_outcome(struct flow *f, const struct pep_ctx *ctx, bool lost)
{
	loss_estimator_update(&f->st.snoop.est, lost, ctx->cfg->adaptive_window, ctx->cfg->adaptive_target);
}

static const struct snoop_policy plus_policy = {
	.extra_copies = plus_copies,
	.first_tx_outcome = plus_outcome,
};

static void plus_init(struct flow *f, const struct pep_ctx *ctx)
{
	snoop_init(f, ctx);
	f->st.snoop.est.copies = ADAPTIVE_START_COPIES;
}

static void plus_packet(struct flow *f, const struct pkt *p, enum pep_dir dir, const struct pep_ctx *ctx,
			struct pep_out *out)
{
	snoop_packet(&plus_policy, f, p, dir, ctx, out);
}

static void plus_timer(struct flow *f, const struct pep_ctx *ctx, struct pep_out *out)
{
	snoop_timer(&plus_policy, f, ctx, out);
}

static void plus_report(const struct flow *f, const struct pep_ctx *ctx, struct json_out *j)
{
	const struct loss_estimator *e = &f->st.snoop.est;

	snoop_report(f, ctx, j);
	jo_u64(j, "copies", ctx->cfg->copies == COPIES_AUTO ? e->copies : (uint64_t)ctx->cfg->copies);
	jo_bool(j, "adaptive", ctx->cfg->copies == COPIES_AUTO);
	jo_dbl(j, "loss_p", e->p);
	jo_dbl(j, "loss_p_bb", e->p_bb);
	jo_u64(j, "loss_samples", e->samples);
}

static void plus_report_settings(const struct pep_config *cfg, struct json_out *j)
{
	if (cfg->copies == COPIES_AUTO)
		jo_str(j, "copies", "auto");
	else
		jo_u64(j, "copies", (uint64_t)cfg->copies);
}

const struct pep_filter_ops filter_snoopplus = {
	.name = "snoop+",
	.init = plus_init,
	.packet = plus_packet,
	.timer = plus_timer,
	.sent = snoop_sent,
	.report = plus_report,
	.report_settings = plus_report_settings,
};
