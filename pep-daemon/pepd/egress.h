/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The wireless interfaces' egress queues, seen from their drop counters.
 *
 * A packet the queueing discipline in front of the radio drops (fq_codel's
 * CoDel on purpose, any queue when full) is lost after pepd forwarded it,
 * exactly like a loss on the air; only the qdisc's drop counter tells them
 * apart.  pepd reads it (rtnetlink, RTM_GETQDISC) and lets snoop leave the
 * next loss to the sender as the congestion signal the qdisc meant.
 *
 * Which counter: the root qdisc's, whose drops include its children's
 * (qdisc_tree_reduce_backlog(), mq's dump sums its queues); but a root netem
 * emulates the air (its drops are the channel's losses), so below it the
 * counter of the qdisc it feeds is read instead.  Drops inside mac80211's
 * own queues (TXQs: its fq_codel when the qdisc is noqueue or mq) are not
 * qdisc drops and are not seen.
 *
 * This file is pure (parsing and arithmetic); egress_io.c does the I/O.
 */
#ifndef PEPD_EGRESS_H
#define PEPD_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nlmsghdr;

#define EGRESS_KIND_LEN 16
#define EGRESS_MAX_QDISCS 64	/* per reading: more are left out (counted) */

struct egress_qdisc {
	int ifindex;
	uint32_t handle, parent;
	char kind[EGRESS_KIND_LEN];
	uint64_t drops;
};

enum egress_parse {
	EGRESS_QDISC,		/* *q filled */
	EGRESS_OTHER,		/* a well-formed message that is not a qdisc with statistics */
	EGRESS_MALFORMED,
};

/* One message of an RTM_GETQDISC dump, of len bytes at most. */
enum egress_parse egress_parse_qdisc(const struct nlmsghdr *nlh, size_t len, struct egress_qdisc *q);

/*
 * The drops of interface ifindex's egress queue among the n qdiscs of one
 * dump (see the top of the file); false when it has no root qdisc there,
 * or only netem.
 */
bool egress_queue_drops(const struct egress_qdisc *qs, size_t n, int ifindex, uint64_t *drops);

struct egress_drops {
	uint64_t total;		/* the last sum read */
	bool primed;		/* total holds a reading */
	uint64_t rise_ns;	/* when a reading last found more drops than the one before (0: never) */
	uint64_t rises;
};

/* A new reading of the summed counters at time now (monotonic ns); a fall (a qdisc replaced) is no rise. */
void egress_note_total(struct egress_drops *e, uint64_t total, uint64_t now);

#endif
