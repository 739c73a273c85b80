/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one interface every filter implements.  A filter is a pure state
 * machine: a parsed packet (or a timer expiry) and the flow's state in,
 * a verdict and a list of actions out.  It never does I/O and never reads
 * a clock; the daemon (daemon.c on lib/nfq.c, inject.c) carries the
 * actions out, so the filters run unchanged under the unit tests and the
 * fuzzer.  Each filter is one ops table in the registry (filter.c), found
 * by the name the configuration's filter key gives.
 */
#ifndef PEPD_FILTER_H
#define PEPD_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#include "cache.h"
#include "config.h"
#include "packet.h"
#include "stats.h"

struct flow;
struct hop_table;

enum pep_dir {
	DIR_TO_WIRELESS,	/* data from the fixed host, leaving on the wireless interface */
	DIR_FROM_WIRELESS,	/* ACKs (and data) from the wireless host */
};

enum pep_verdict {
	VERDICT_ACCEPT,
	VERDICT_DROP,
	VERDICT_INJECT,		/* drop the original, send the cached copies of [inject_seq, inject_end) instead */
};

enum pep_action_type {
	ACTION_SEND_SEGMENT,	/* send the cached segment starting at seq, `copies` times */
	ACTION_SEND_ACK,	/* send an ACK for seq to the fixed host, as the wireless host */
	ACTION_SEND_DSACK,	/* ... with a D-SACK block for [dsack.start, dsack.end) */
};

struct pep_action {
	uint8_t type;
	uint8_t copies;		/* total transmissions: 1 + extra copies */
	uint32_t seq;
	struct sack_block dsack;	/* with ACTION_SEND_DSACK */
	int32_t window;		/* with ACTION_SEND_ACK/DSACK: the raw window field (-1: the wireless host's latest) */
};

#define PEP_MAX_ACTIONS 64

enum pep_timer_op {
	TIMER_KEEP,
	TIMER_SET,
	TIMER_CANCEL,
};

struct pep_out {
	enum pep_verdict verdict;
	uint32_t inject_seq;	/* with VERDICT_INJECT: the first cached segment, */
	uint32_t inject_end;	/* and the end of the last (a GSO super-packet is several) */
	bool hide_sack;		/* forward with the SACK option blanked */
	uint8_t sack_n;		/* forward with the SACK option cut to these blocks (0: as it came) */
	struct sack_block sack_blocks[2];
	bool set_window;	/* forward with the window field set to window (raw, unscaled) */
	/* the filter will pass this flow untouched from now on: the kernel may stop queueing it (bypass_mark) */
	bool bypass;
	uint16_t window;
	enum pep_timer_op timer_op;
	uint64_t timer_at;	/* absolute, ns, with TIMER_SET */
	uint32_t nact;
	struct pep_action act[PEP_MAX_ACTIONS];
};

struct pep_ctx {
	const struct pep_config *cfg;
	struct cache_budget *budget;
	struct hop_table *hops;	/* the wireless hosts' hops (NULL: nothing shared) */
	struct pep_counters *total;
	uint64_t now;		/* monotonic ns */
	uint32_t mtu;		/* the wireless egress MTU (0: 1500): what one packet carries there */
	uint64_t egress_drop_ns;	/* when the egress qdiscs' drops last rose (0: never, or not watched) */
};

struct json_out;

struct pep_filter_ops {
	const char *name;
	void (*init)(struct flow *f, const struct pep_ctx *ctx);
	void (*packet)(struct flow *f, const struct pkt *p, enum pep_dir dir, const struct pep_ctx *ctx,
		       struct pep_out *out);
	void (*timer)(struct flow *f, const struct pep_ctx *ctx, struct pep_out *out);
	/*
	 * What became of a segment this filter had sent (VERDICT_INJECT or
	 * ACTION_SEND_SEGMENT): queued on the egress, or refused by it (the
	 * base station's own queue is full: congestion, not a wireless loss).
	 * May be NULL.
	 */
	void (*sent)(struct flow *f, uint32_t seq, bool queued, const struct pep_ctx *ctx);
	/* filter-specific per-flow figures for `pepd stats` (may be NULL) */
	/*
	 * pepd stats' figures of a flow: runs in the control thread on a copy
	 * of the flow (report.c), so it reads the flow's own fields and never
	 * follows a pointer out of it; ctx has cfg and now only.
	 */
	void (*report)(const struct flow *f, const struct pep_ctx *ctx, struct json_out *j);
	/* the settings of this filter that `pepd stats` shows with the daemon's (may be NULL) */
	void (*report_settings)(const struct pep_config *cfg, struct json_out *j);
};

/* Every filter, NULL-terminated: the registry. */
extern const struct pep_filter_ops *const pep_filters[];

/* The filter called name, or NULL. */
const struct pep_filter_ops *filter_find(const char *name);

extern const struct pep_filter_ops filter_passthrough;
extern const struct pep_filter_ops filter_snoop;
extern const struct pep_filter_ops filter_snoopplus;
extern const struct pep_filter_ops filter_pc;

static inline void out_reset(struct pep_out *out)
{
	out->verdict = VERDICT_ACCEPT;
	out->inject_seq = 0;
	out->inject_end = 0;
	out->hide_sack = false;
	out->bypass = false;
	out->sack_n = 0;
	out->set_window = false;
	out->timer_op = TIMER_KEEP;
	out->timer_at = 0;
	out->nact = 0;
}

/* Append an action; false (and nothing appended) when the list is full. */
static inline bool out_push(struct pep_out *out, enum pep_action_type type, uint32_t seq, uint8_t copies)
{
	if (out->nact >= PEP_MAX_ACTIONS)
		return false;
	out->act[out->nact].type = (uint8_t)type;
	out->act[out->nact].seq = seq;
	out->act[out->nact].copies = copies;
	out->act[out->nact].dsack = (struct sack_block){ 0, 0 };
	out->act[out->nact].window = -1;
	out->nact++;
	return true;
}

/* Append an ACK for ack reporting [start, end) received twice (RFC 2883); false when the list is full. */
static inline bool out_push_dsack(struct pep_out *out, uint32_t ack, uint32_t start, uint32_t end)
{
	if (!out_push(out, ACTION_SEND_DSACK, ack, 1))
		return false;
	out->act[out->nact - 1].dsack = (struct sack_block){ start, end };
	return true;
}

#endif
