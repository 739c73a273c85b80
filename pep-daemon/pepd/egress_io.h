/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading the wireless interfaces' egress queue drops (egress.h) over
 * rtnetlink: one non-blocking RTM_GETQDISC dump at most every
 * EGRESS_POLL_NS, from the queue thread that needs it, which owns its
 * socket (no locks).  A failure costs the signal, never the packet path:
 * counted, and the reading is skipped.
 */
#ifndef PEPD_EGRESS_IO_H
#define PEPD_EGRESS_IO_H

#include <stdint.h>

#include "egress.h"

#define EGRESS_POLL_NS (10 * 1000 * 1000ULL)

struct mnl_socket;

struct egress_watch {
	struct mnl_socket *nl;
	uint32_t seq;
	uint64_t polled_ns;
	struct egress_drops drops;
	uint64_t errors;	/* dumps that failed or were cut short */
	uint64_t skipped;	/* qdiscs beyond EGRESS_MAX_QDISCS in one dump */
	struct egress_qdisc seen[EGRESS_MAX_QDISCS];
};

/* 0, or -1 with err filled. */
int egress_open(struct egress_watch *w, char *err, size_t errlen);
void egress_close(struct egress_watch *w);

/* If EGRESS_POLL_NS has passed since the last reading, read the summed drops of ifindexes. */
void egress_poll(struct egress_watch *w, const uint32_t *ifindexes, uint32_t n, uint64_t now);

#endif
