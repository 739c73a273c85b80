// SPDX-License-Identifier: GPL-2.0-only
/*
 * Passthrough: parse, track and count, never change anything.  The
 * baseline for the benchmark (what NFQUEUE plus pepd's bookkeeping cost)
 * and a way to watch a deployment's flows before switching a filter on.
 */
#include "flow.h"

static void pass_init(struct flow *f, const struct pep_ctx *ctx)
{
	(void)f;
	(void)ctx;
}

static void pass_packet(struct flow *f, const struct pkt *p, enum pep_dir dir, const struct pep_ctx *ctx,
			struct pep_out *out)
{
	(void)p;
	(void)out;
	if (dir == DIR_TO_WIRELESS)
		COUNT(ctx, f, data_packets, 1);
	else
		COUNT(ctx, f, ack_packets, 1);
}

static void pass_timer(struct flow *f, const struct pep_ctx *ctx, struct pep_out *out)
{
	(void)f;
	(void)ctx;
	(void)out;
}

const struct pep_filter_ops filter_passthrough = {
	.name = "passthrough",
	.init = pass_init,
	.packet = pass_packet,
	.timer = pass_timer,
	.report = NULL,
};
