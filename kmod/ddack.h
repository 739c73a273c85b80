/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tcp_ddack: receiver-side Delayed Duplicate ACKs (Vaidya et al. 1999, §5).
 *
 * Shared definitions of the three parts of the module:
 *   ddack_main.c  module init/exit, per-netns set-up, sysctls, statistics
 *   ddack_hook.c  the LOCAL_OUT hook: parse, classify, verdict
 *   ddack_flow.c  the per-flow state machine: hold, discard, release
 */
#ifndef _DDACK_H
#define _DDACK_H

#include <linux/hrtimer.h>
#include <linux/in6.h>
#include <linux/mutex.h>
#include <linux/netfilter.h>
#include <linux/percpu.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "compat.h"

/* How dupacks of senders with SACK are treated (net.tcp_ddack.sack_mode). */
enum ddack_sack_mode {
	DDACK_SACK_KEEP = 0,	/* the paper: only the count matters */
	DDACK_SACK_STRIP = 1,	/* early dupacks leave without SACK blocks */
	DDACK_SACK_HOLD = 2,	/* SACK-bearing dupacks are held from the 1st */
};

/*
 * Per-netns configuration, one int per sysctl so that proc_dointvec_minmax
 * validates every write.  The data path reads these with READ_ONCE().
 */
struct ddack_cfg {
	int enabled;
	int delay_us;
	int threshold;
	int pace_us;
	int max_held;
	int max_flows;
	int flow_timeout_s;
	int sack_mode;
	int adaptive;
	int adaptive_pct;
	int adaptive_margin_pct;
	int delay_min_us;
	int delay_max_us;
	int delay_current_us;	/* read-only: the d in force */
};

/*
 * Statistics, per CPU and per netns.  The order is the column order of
 * /proc/net/stat/tcp_ddack (see ddack_stat_names in ddack_main.c).
 */
enum ddack_stat {
	DDACK_STAT_ACKS,		/* pure ACKs of local TCP sockets seen */
	DDACK_STAT_DUPACKS,		/* of which duplicates (same ack, window) */
	DDACK_STAT_IMMEDIATE,		/* dupacks sent at once (<= threshold) */
	DDACK_STAT_HELD,		/* dupacks stolen to be held */
	DDACK_STAT_DISCARDED,		/* held, freed: the hole filled within d */
	DDACK_STAT_RELEASED,		/* held, sent after d */
	DDACK_STAT_EVICTED,		/* held, freed: over max_held */
	DDACK_STAT_FLUSHED,		/* held, freed: flow end, netns exit */
	DDACK_STAT_FLUSH_SENT,		/* held, sent early: disable, unload */
	DDACK_STAT_EPISODES,		/* loss episodes (first dupack of a hole) */
	DDACK_STAT_EPISODES_FILLED,	/* ... ended by a fill while holding */
	DDACK_STAT_EPISODES_RELEASED,	/* ... whose held dupacks went out */
	DDACK_STAT_SACK_STRIPPED,	/* early dupacks sent without SACK */
	DDACK_STAT_FLOWS_CREATED,
	DDACK_STAT_FLOWS_EXPIRED,	/* removed: closed, idle or reused */
	DDACK_STAT_FLOWS_UNTRACKED,	/* not tracked: max_flows reached */
	DDACK_STAT_ADAPT_SAMPLES,	/* hole-fill times fed to adaptive d */
	DDACK_STAT_ADAPT_IGNORED,	/* fills attributed to the sender */
	DDACK_STAT_ERRORS,		/* passed unheld: no memory, dying route */
	DDACK_STAT_MAX
};

struct ddack_stats {
	u64 count[DDACK_STAT_MAX];
};

/* Flow key: addresses and ports as on the wire; the netns is implicit. */
struct ddack_key {
	struct in6_addr saddr;	/* IPv4 as ::ffff:a.b.c.d */
	struct in6_addr daddr;
	__be16 sport;
	__be16 dport;
	u32 family;
};

#define DDACK_HASH_BITS 10

struct ddack_table {
	struct hlist_head buckets[1 << DDACK_HASH_BITS];
	spinlock_t locks[1 << DDACK_HASH_BITS];
	u32 seed;
	atomic_t count;
};

struct ddack_net {
	struct ddack_cfg cfg;
	struct net *net;
	struct mutex mutex;		/* hooks_on, exiting, delay bounds */
	bool hooks_on;
	bool exiting;			/* pre_exit ran: never register again */
	struct ctl_table_header *sysctl;
	struct ddack_stats __percpu *stats;
	struct ddack_table *table;
	struct delayed_work gc;
	spinlock_t est_lock;		/* adaptive-d estimator */
	u32 est_us;
};

/* One TCP connection seen from its receiver. */
struct ddack_flow {
	struct hlist_node node;		/* in ddack_table, RCU */
	struct list_head gc_node;	/* on a reaper's private list */
	struct rcu_head rcu;
	struct ddack_key key;
	struct ddack_net *dn;

	spinlock_t lock;		/* everything below */
	bool dead;			/* unlinked or being freed: hands off */
	bool closed;			/* FIN or RST seen: no more holding */
	bool ack_valid;
	bool released;			/* the timer fired in this episode */
	const struct sock *sk;		/* identity only, never dereferenced */
	u32 last_ack;
	u16 last_win;			/* raw 16-bit field, as the sender sees it */
	u32 dupcnt;			/* dupacks in the current episode */
	ktime_t episode_start;
	ktime_t release_at;		/* next held ACK is due then */
	ktime_t released_at;
	unsigned long last_seen;	/* jiffies */

	struct sk_buff_head held;
	int (*okfn)(struct net *net, struct sock *sk, struct sk_buff *skb);
	struct hrtimer timer;
};

extern unsigned int ddack_net_id;

static inline struct ddack_net *ddack_pernet(const struct net *net)
{
	return net_generic(net, ddack_net_id);
}

static inline void ddack_stat_add(struct ddack_net *dn, enum ddack_stat s,
				  u64 n)
{
	this_cpu_add(dn->stats->count[s], n);
}

static inline void ddack_stat_inc(struct ddack_net *dn, enum ddack_stat s)
{
	ddack_stat_add(dn, s, 1);
}

/* What the hook learnt about one outgoing segment (ddack_hook.c). */
struct ddack_pkt {
	struct ddack_key key;
	u32 ack;
	u16 win;
	bool pure_ack;		/* ACK, no SYN/FIN/RST, no payload */
	bool ends_flow;		/* FIN or RST */
	bool has_sack;
	bool sack_hole;		/* a SACK block above the ACK: a hole is open */
	u8 sack_off;		/* SACK option: offset in the options ... */
	u8 sack_len;		/* ... and length, when has_sack */
	u16 thoff;		/* TCP header offset from skb->data */
	u16 doff;		/* TCP header length in bytes */
	u32 rcv_rtt_us;		/* the socket's receive-side RTT estimate */
};

/* ddack_flow.c */
int ddack_table_init(struct ddack_net *dn);
void ddack_table_flush(struct ddack_net *dn, bool transmit);
unsigned int ddack_flow_packet(struct ddack_net *dn, struct sk_buff *skb,
			       const struct nf_hook_state *state,
			       const struct ddack_pkt *pkt);
void ddack_gc_work(struct work_struct *work);
u32 ddack_delay_us(struct ddack_net *dn);

/* ddack_hook.c */
int ddack_hooks_register(struct net *net);
void ddack_hooks_unregister(struct net *net);
int ddack_strip_sack(struct sk_buff *skb, const struct ddack_pkt *pkt);

#endif /* _DDACK_H */
