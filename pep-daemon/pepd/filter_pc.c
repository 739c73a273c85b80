// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Packet Controller (Zeng and Trajkovic, WiMob 2005): two filters at
 * the base station against the spurious fast retransmits and the chain
 * reaction of spurious timeouts that delay variation on the wireless hop
 * causes.  No cache: a few sequence numbers per flow.
 *
 * ACK filter (from the wireless host).  dupack_thresh redefines the
 * "3 duplicate ACKs" that signal a loss: the first two dupacks of a run
 * pass, dupacks 3 .. dupack_thresh - 1 are filtered, and from the
 * dupack_thresh-th on they pass again.  The sender therefore reaches its
 * own threshold of 3 only when the receiver has sent dupack_thresh of them:
 * reordering of up to dupack_thresh - 1 segments (delay variation) no
 * longer triggers a fast retransmit, while a real loss still does, later.
 * dupack_thresh <= 3 makes the filter transparent.
 *
 * SACK: a SACK sender does not count dupacks; it marks a hole lost as soon
 * as SACK blocks show data above it (RACK: after about min_rtt/4).  To give
 * it the same reordering tolerance, the dupacks passed below the threshold
 * go with their SACK option blanked, and the first dupack at the threshold
 * goes with its blocks, which by then describe everything received.
 *
 * Data filter (from the fixed host):
 *   new segment                                    forward
 *   retransmission not yet acknowledged            forward
 *   retransmission already acknowledged (its end at or below lastAckSent,
 *   the last ACK passed to the fixed host)         drop: it would only draw
 *                                                  duplicate ACKs and cost
 *                                                  wireless bandwidth
 * and for every ack_every_rtx (2) drops of the same segment, send the fixed
 * host an ACK for lastAckSent, in case the ACKs were lost on the wired side.
 *
 * Stepping aside (every packet of the flow passes untouched, counted in
 * flows_stepped_aside), for the flows the filters cannot help:
 *   - sack_flows = aside (the default): the handshake negotiated SACK (a
 *     flow adopted mid-stream: SACK blocks seen).  The filter was designed
 *     for ns-2's Reno; a Linux SACK sender with RACK marks a hole lost by
 *     time once SACK blocks show data above it, and a SACK sender's
 *     recovery then waits for the dupack_thresh-th dupack's blocks;
 *   - aside_losses (2): the flow's dupack runs that were losses outnumber
 *     those that were reordering by aside_losses.  A loss: the run reached
 *     dupack_thresh (the filter delayed the sender's fast retransmit), or
 *     a retransmission of the hole by the sender ended it (a timeout: the
 *     window held too few segments to reach the threshold).  Reordering:
 *     a run of 3 to dupack_thresh - 1 dupacks that a new ACK ended with no
 *     retransmission (the late segment arrived; the filter kept a
 *     spurious fast retransmit from the sender).  The path loses more than
 *     it reorders.
 * sack_flows = act and aside_losses = 0 are the paper's filter for every
 * flow.
 */
#include <string.h>

#include "flow.h"
#include "json.h"
#include "seq.h"

static void pc_step_aside(struct flow *f, const struct pep_ctx *ctx)
{
	f->st.pc.aside = true;
	COUNT(ctx, f, flows_stepped_aside, 1);
}

/* A run that was a loss; aside_losses more losses than reorderings: step aside. */
static void pc_loss_run(struct flow *f, const struct pep_ctx *ctx)
{
	struct pc_state *s = &f->st.pc;
	uint32_t margin = ctx->cfg->aside_losses;

	s->loss_runs++;
	if (margin && !s->aside && s->loss_runs >= s->reorder_runs + margin)
		pc_step_aside(f, ctx);
}

static void pc_init(struct flow *f, const struct pep_ctx *ctx)
{
	(void)ctx;
	memset(&f->st.pc, 0, sizeof(f->st.pc));
}

static void pc_data(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx, struct pep_out *out)
{
	struct pc_state *s = &f->st.pc;
	uint32_t end = pkt_end(p);

	COUNT(ctx, f, data_packets, 1);
	if (!s->data_seen || (p->flags & TCPF_SYN)) {
		s->data_seen = true;
		s->snd_max = end;
		return;
	}
	if (!seq_before(p->seq, s->snd_max) || pkt_seq_len(p) == 0) {
		/* Case 1: a new segment (or a pure ACK / window probe): forward */
		if (seq_after(end, s->snd_max))
			s->snd_max = end;
		return;
	}
	COUNT(ctx, f, sender_rtx, 1);
	/* The hole of a dupack run, resent by the sender: that run is a loss. */
	if (s->ack_seen && s->dupacks && !seq_after(p->seq, s->last_ack_sent) && seq_after(end, s->last_ack_sent))
		s->hole_rtx = true;
	if (!s->ack_seen || seq_after(end, s->last_ack_sent))
		return;		/* Case 2: not acknowledged yet: forward */
	/* Case 3: acknowledged already: drop, and re-ACK every ack_every_rtx drops */
	out->verdict = VERDICT_DROP;
	COUNT(ctx, f, data_dropped, 1);
	if (s->rtx_valid && s->rtx_seq == p->seq) {
		s->rtx_count++;
	} else {
		s->rtx_valid = true;
		s->rtx_seq = p->seq;
		s->rtx_count = 1;
	}
	if (s->rtx_count % ctx->cfg->ack_every_rtx == 0 && out_push(out, ACTION_SEND_ACK, s->last_ack_sent, 1))
		COUNT(ctx, f, acks_generated, 1);
}

static void pc_ack(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx, struct pep_out *out)
{
	struct pc_state *s = &f->st.pc;
	uint32_t thresh = ctx->cfg->dupack_thresh;
	bool pure = p->payload_len == 0 && !(p->flags & (TCPF_SYN | TCPF_FIN | TCPF_RST));

	COUNT(ctx, f, ack_packets, 1);
	if (!(p->flags & TCPF_ACK))
		return;
	if (!s->ack_seen || seq_after(p->ack, s->last_ack_sent)) {
		/* A run that ended below the threshold: reordering the filter hid, or a loss the sender timed out on. */
		if (thresh > 3 && s->dupacks >= 3 && s->dupacks < thresh) {
			if (s->hole_rtx)
				pc_loss_run(f, ctx);
			else
				s->reorder_runs++;
		}
		s->hole_rtx = false;
		s->ack_seen = true;
		s->last_ack_sent = p->ack;
		s->last_win = p->window;
		s->dupacks = 0;
		return;
	}
	if (p->ack != s->last_ack_sent || !pure || p->window != s->last_win) {
		s->last_win = p->window;
		return;		/* an old ACK, data or a window update: not a dupack */
	}
	s->dupacks++;
	if (thresh > 3 && s->dupacks == thresh)
		pc_loss_run(f, ctx);	/* its fast retransmit delayed until now */
	if (thresh <= 3 || s->dupacks >= thresh)
		goto pass;	/* the sender may count this one */
	if (s->dupacks >= 3) {
		out->verdict = VERDICT_DROP;
		COUNT(ctx, f, dupacks_dropped, 1);
		return;
	}
	if (p->nsack) {
		out->hide_sack = true;	/* below the threshold: no SACK information either */
		COUNT(ctx, f, sack_hidden, 1);
	}
pass:
	COUNT(ctx, f, dupacks_forwarded, 1);
}

static void pc_packet(struct flow *f, const struct pkt *p, enum pep_dir dir, const struct pep_ctx *ctx,
		      struct pep_out *out)
{
	struct pc_state *s = &f->st.pc;

	if (!s->seen && f->conn.established) {
		s->seen = true;
		COUNT(ctx, f, flows_seen, 1);
	}
	/* SACK known from the SYNs, or for an adopted flow from the first SACK block. */
	if (s->seen && !s->aside && ctx->cfg->sack_flows == SACK_FLOWS_ASIDE && conn_sack_ok(&f->conn))
		pc_step_aside(f, ctx);
	if (s->aside) {
		out->bypass = true;	/* for good: nothing brings a flow back */
		if (dir == DIR_TO_WIRELESS)
			COUNT(ctx, f, data_packets, 1);
		else
			COUNT(ctx, f, ack_packets, 1);
		return;
	}
	if (dir == DIR_TO_WIRELESS)
		pc_data(f, p, ctx, out);
	else
		pc_ack(f, p, ctx, out);
}

static void pc_timer(struct flow *f, const struct pep_ctx *ctx, struct pep_out *out)
{
	(void)f;
	(void)ctx;
	(void)out;
}

static void pc_report(const struct flow *f, const struct pep_ctx *ctx, struct json_out *j)
{
	(void)ctx;
	jo_u64(j, "dupacks", f->st.pc.dupacks);
	jo_u64(j, "last_ack_sent", f->st.pc.last_ack_sent);
	jo_bool(j, "stepped_aside", f->st.pc.aside);
	jo_u64(j, "loss_runs", f->st.pc.loss_runs);
	jo_u64(j, "reorder_runs", f->st.pc.reorder_runs);
}

static void pc_report_settings(const struct pep_config *cfg, struct json_out *j)
{
	jo_u64(j, "dupack_thresh", cfg->dupack_thresh);
	jo_str(j, "sack_flows", cfg->sack_flows == SACK_FLOWS_ASIDE ? "aside" : "act");
	jo_u64(j, "aside_losses", cfg->aside_losses);
}

const struct pep_filter_ops filter_pc = {
	.name = "pc",
	.init = pc_init,
	.packet = pc_packet,
	.timer = pc_timer,
	.report = pc_report,
	.report_settings = pc_report_settings,
};
