/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tcp_snack: Selective Negative ACKnowledgements (Cheng & Lin, §IV) on an
 * unmodified Linux TCP, per network namespace.
 *
 *   snack_main.c  module and namespace life cycle, sysctls, statistics
 *   snack_rx.c    receiver: LOCAL_OUT hook writing the option on pure
 *                 ACKs from the socket's real out-of-order queue
 *   snack_tx.c    sender: LOCAL_IN hook turning the option into SACK
 *                 blocks the stack's own scoreboard acts on
 *   snack_codec.h the wire format and option-space rules (userspace-tested)
 */
#ifndef _SNACK_H
#define _SNACK_H

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/netfilter.h>
#include <linux/percpu.h>
#include <linux/skbuff.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "compat.h"

/* Per-netns configuration, one int per sysctl (net.tcp_snack.*). */
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
	SNACK_STAT_SKIPPED,		/* MD5/MPTCP/odd header: hands off */
	SNACK_STAT_EMPTY,		/* no whole MSS block held */
	SNACK_STAT_RX_ERRORS,		/* no memory: sent as they were */
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
	SNACK_STAT_MAX
};

struct snack_stats {
	u64 count[SNACK_STAT_MAX];
};

struct snack_net {
	struct snack_cfg cfg;
	struct net *net;
	struct mutex mutex;		/* hook registration */
	bool rx_hooks;
	bool tx_hooks;
	bool exiting;
	struct ctl_table_header *sysctl;
	struct snack_stats __percpu *stats;
	atomic_t rotation;		/* which middle runs the next ACK gets */
};

extern unsigned int snack_net_id;

static inline struct snack_net *snack_pernet(const struct net *net)
{
	return net_generic(net, snack_net_id);
}

static inline void snack_stat_add(struct snack_net *sn, enum snack_stat s,
				  u64 n)
{
	this_cpu_add(sn->stats->count[s], n);
}

static inline void snack_stat_inc(struct snack_net *sn, enum snack_stat s)
{
	snack_stat_add(sn, s, 1);
}

/* Where the TCP header of a segment is (both hooks). */
struct snack_seg {
	unsigned int thoff;	/* TCP header, from skb->data */
	unsigned int doff;	/* TCP header length, bytes */
	unsigned int l4len;	/* TCP header + payload */
};

int snack_seg_parse(const struct sk_buff *skb, u8 pf, struct snack_seg *seg);
int snack_set_options(struct sk_buff *skb, u8 pf, const struct snack_seg *seg,
		      const u8 *opt, unsigned int optlen, bool incoming);

/* snack_rx.c */
int snack_rx_register(struct net *net);
void snack_rx_unregister(struct net *net);

/* snack_tx.c */
int snack_tx_register(struct net *net);
void snack_tx_unregister(struct net *net);

#endif /* _SNACK_H */
