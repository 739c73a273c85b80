/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tcp_ddack: receiver-side Delayed Duplicate ACKs (Vaidya et al. 1999, §5).
 *
 * Shared definitions of the parts of the module (call graph: README.rst):
 *   ddack_main.c   module init/exit, per-netns set-up, knobs, statistics
 *   ddack_hook.c   the LOCAL_OUT hook: parse, then carry out the decision
 *                  on the segment (pass, stolen, SACK stripped)
 *   ddack_flow.c   the flow table; carries out the decisions on a flow
 *                  (hold, discard, release: queues, timers, counters)
 *   ddack_dda.c    the per-flow state machine that decides, pure
 *   ddack_knobs.h  net.tcp_ddack.*, every knob once
 */
#ifndef _DDACK_H
#define _DDACK_H

#include <linux/hrtimer.h>
#include <linux/in6.h>
#include <linux/netfilter.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "airtcp_pernet.h"
#include "airtcp_tcp.h"
#include "ddack_dda.h"

/*
 * Per-netns knobs (ddack_knobs.h), one int per sysctl so that
 * proc_dointvec_minmax validates every write.  The data path reads them
 * with READ_ONCE().
 */
struct ddack_cfg {
	int enabled;
	int delay_us;
	int threshold;
	int pace_us;
	int max_held;
	int max_held_total;
	int max_flows;
	int flow_timeout_s;
	int sack_mode;
	int aside_unfilled;
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
	DDACK_STAT_ERRORS,		/* passed unheld: no memory; dropped: dying route */
	DDACK_STAT_LIMITED,		/* sent at once: max_held_total reached */
	DDACK_STAT_CAPPED,		/* paced releases cut short by the hold cap */
	DDACK_STAT_GC_SENT,		/* held, sent by the collector: stale flow */
	DDACK_STAT_ASIDE_SACK,		/* flows stepped aside for: SACK */
	DDACK_STAT_ASIDE_UNFILLED,	/* ... no hole filled within d */
	DDACK_STAT_MAX
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
	struct airtcp_pernet pn;	/* first: the shared code finds it */
	struct ddack_cfg cfg;		/* pn.mutex: the delay bounds */
	struct ddack_table *table;
	struct delayed_work gc;
	atomic_t held;			/* ACKs held by all flows now */
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
	const struct sock *sk;		/* identity only, never dereferenced */
	s64 last_seen;			/* ns, the clock of the state machine */
	struct ddack_dda dda;		/* the state machine's */

	struct sk_buff_head held;
	int (*okfn)(struct net *net, struct sock *sk, struct sk_buff *skb);
	struct hrtimer timer;
};

extern unsigned int ddack_net_id;

static inline struct ddack_net *ddack_pernet(const struct net *net)
{
	return net_generic(net, ddack_net_id);
}

/* What the hook learnt about one outgoing segment (ddack_hook.c). */
struct ddack_pkt {
	struct ddack_key key;
	struct ddack_seg in;	/* for the state machine */
	struct airtcp_seg seg;
	u8 sack_off;		/* SACK option: offset in the options ... */
	u8 sack_len;		/* ... and length, when in.has_sack */
};

/* ddack_flow.c */
int ddack_table_init(struct ddack_net *dn);
void ddack_table_flush(struct ddack_net *dn, bool transmit);
struct ddack_decision ddack_flow_packet(struct ddack_net *dn,
					struct sk_buff *skb,
					const struct nf_hook_state *state,
					struct ddack_pkt *pkt);
void ddack_gc_work(struct work_struct *work);
u32 ddack_delay_us(struct ddack_net *dn);
void ddack_flow_drain(struct net *net);

/* ddack_hook.c */
extern const struct airtcp_switch ddack_switch;

#endif /* _DDACK_H */
