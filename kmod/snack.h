/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tcp_snack: Selective Negative ACKnowledgements (Cheng & Lin, §IV) on an
 * unmodified Linux TCP, per network namespace.
 *
 *   snack_main.c   module and namespace life cycle, knobs, statistics
 *   snack_rx.c     receiver: LOCAL_OUT hook writing the option on pure
 *                  ACKs from the socket's real out-of-order queue
 *   snack_tx.c     sender: LOCAL_IN hook turning the option into SACK
 *                  blocks the stack's own scoreboard acts on
 *   snack_codec.c  the wire format and option-space rules, pure: it
 *                  decides the options, the hooks write them
 *   snack_knobs.h  net.tcp_snack.*, every knob once
 *
 * Call graph: README.rst.
 */
#ifndef _SNACK_H
#define _SNACK_H

#include <linux/atomic.h>
#include <linux/netfilter.h>

#include "airtcp_pernet.h"
#include "airtcp_tcp.h"
#include "snack_codec.h"

/* Per-netns knobs, one int per sysctl (snack_knobs.h). */
struct snack_cfg {
	int receiver;		/* write SNACK on outgoing pure ACKs */
	int sender;		/* act on incoming SNACK */
	int mode;		/* enum snack_mode: 254 + ExID, or kind 21 */
	int sack_policy;	/* enum snack_sack_policy */
	int max_vec;		/* bit-vector bytes at most (0..30) */
};

/* Columns of /proc/net/stat/tcp_snack (snack_stat_names). */
enum snack_stat {
	/* receiver */
	SNACK_STAT_OOO_ACKS,		/* pure ACKs sent with data held OOO */
	SNACK_STAT_WRITTEN,		/* ... that left with a SNACK option */
	SNACK_STAT_SACK_TRIMMED,	/* SACK blocks given up for it */
	SNACK_STAT_NO_SPACE,		/* no room, sent as they were */
	SNACK_STAT_SKIPPED,		/* a SNACK already, odd header: hands off */
	SNACK_STAT_EMPTY,		/* no whole MSS block held */
	SNACK_STAT_RX_ERRORS,		/* no memory: sent as they were */
	SNACK_STAT_UNKNOWN_OPT,		/* TCP-AO, MD5, MPTCP, unknown: untouched */
	SNACK_STAT_DEFERRED,		/* reinjected after a queue (not from TCP) */
	SNACK_STAT_BUSY,		/* ... socket owned or locked: as they were */
	SNACK_STAT_RX_NO_SACK,		/* no SACK negotiated: as they were */
	/* sender */
	SNACK_STAT_SEEN,		/* incoming segments with our option */
	SNACK_STAT_ACTED,		/* ... turned into SACK blocks */
	SNACK_STAT_SACK_ADDED,		/* SACK blocks written */
	SNACK_STAT_MALFORMED,		/* options that cannot be: ignored */
	SNACK_STAT_SCPS_IGNORED,	/* kind 21: nothing safe to act on */
	SNACK_STAT_NO_SOCKET,		/* no established socket found */
	SNACK_STAT_NO_SACK,		/* SACK not negotiated: useless */
	SNACK_STAT_OUT_OF_WINDOW,	/* ACK or runs outside the send window */
	SNACK_STAT_NOT_PURE,		/* on a data segment: ignored */
	SNACK_STAT_BAD_CSUM,		/* checksum wrong: left to TCP to drop */
	SNACK_STAT_TX_ERRORS,		/* no memory: passed unchanged */
	SNACK_STAT_TX_UNKNOWN_OPT,	/* with TCP-AO, MD5, MPTCP, unknown: ignored */
	SNACK_STAT_MAX
};

struct snack_net {
	struct airtcp_pernet pn;	/* first: the shared code finds it */
	struct snack_cfg cfg;
	atomic_t rotation;		/* which middle runs the next ACK gets */
};

extern unsigned int snack_net_id;

static inline struct snack_net *snack_pernet(const struct net *net)
{
	return net_generic(net, snack_net_id);
}

/* The halves' hooks: net.tcp_snack.receiver (snack_rx.c), .sender (snack_tx.c). */
extern const struct airtcp_switch snack_rx_switch;
extern const struct airtcp_switch snack_tx_switch;

#endif /* _SNACK_H */
