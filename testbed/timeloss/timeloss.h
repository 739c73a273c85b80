/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared between the tc/BPF program and its loader: the configuration the
 * loader writes into the program's read-only data before loading it, and
 * the channel state kept in a one-entry array map.
 */
#ifndef AIRTCP_TIMELOSS_H
#define AIRTCP_TIMELOSS_H

#include <linux/types.h>

#define TL_GOOD 0
#define TL_BAD 1

/* Exponential holding times come from a table of quantiles of Exp(1),
 * -ln((i + 0.5) / N) in Q16 fixed point: the program has no floating point.
 */
#define TL_EXPQ_BITS 12
#define TL_EXPQ_SIZE (1 << TL_EXPQ_BITS)
#define TL_Q16 16

struct tl_config {
	__u64 start_ns;		/* CLOCK_MONOTONIC; no loss before it */
	__u64 offset_ns;	/* subtracted from the arrival time: the state when the packet was on air */
	__u64 mean_ns[2];	/* mean holding time per state */
	__u64 first_good_ns;	/* deterministic: first good period */
	__u64 seed;
	__u32 loss[2];		/* loss probability per state, Q32 */
	__u32 loss_all[2];	/* 1: every packet lost in that state */
	__u32 pi_bad;		/* stationary P(bad), Q32 (resync draw) */
	__u32 deterministic;	/* 1: fixed holding times (outages) */
	__u32 expq[TL_EXPQ_SIZE];
};

struct tl_chan {
	struct bpf_spin_lock lock;
	__u32 bad;
	__u32 started;
	__u64 next_switch_ns;
	__u64 rng_time;		/* drives holding times only: the timeline */
	__u64 rng_loss;		/* drives loss decisions only */
	__u64 packets[2];
	__u64 dropped[2];
	__u64 switches;
	__u64 resyncs;		/* idle for > TL_CATCHUP states: redrawn */
};

#define TL_CATCHUP 128

#endif /* AIRTCP_TIMELOSS_H */
