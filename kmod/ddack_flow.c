// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcp_ddack: per-flow state, the hold/discard/release state machine.
 *
 * One entry per TCP connection whose receiver sends pure ACKs in this
 * netns.  A duplicate ACK is a pure ACK whose ack number and raw window
 * equal those of the previous ACK of the flow (RFC 5681's definition, the
 * one a Linux sender applies).  Per loss episode (a run of dupacks):
 *
 *              new cumulative ACK (any state): held ACKs discarded,
 *              fill time -> adaptive d; back to IDLE
 *   +------+   dupack #1..threshold    +-----------+
 *   | IDLE |-------------------------->| IMMEDIATE |  sent at once
 *   +------+                           +-----------+  (SACK stripped in
 *                                            |          sack_mode 1)
 *                 dupack #threshold+1        v
 *                 (stolen, timer armed) +---------+  more dupacks:
 *                                       | HOLDING |  stolen too
 *                                       +---------+  (oldest freed
 *                                            |        past max_held)
 *                 d after the first hold     v
 *                                       +----------+  held ACKs sent,
 *                                       | RELEASED |  one per pace_us;
 *                                       +----------+  later dupacks of
 *                                                     the episode at once
 *
 * FIN or RST from the socket: held ACKs freed, the flow closed (no more
 * holding) and reaped by the garbage collector.
 *
 * Lifetime rules (see also Documentation/tcp_ddack.rst):
 *  - flows are found under RCU and changed under their own lock; only
 *    process context unlinks them (garbage collector, disable, netns exit),
 *    after marking them dead, and frees them after hrtimer_cancel() and an
 *    RCU grace period;
 *  - a held skb keeps its socket's memory pinned through its destructor, as
 *    in a qdisc, and its route through skb_dst_force(); it is sent with the
 *    continuation of the hook (dst_output) or freed, never leaked: every
 *    path that empties f->held either sends or frees what it took.
 */
#include <linux/jhash.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/dst.h>
#include <net/tcp.h>

#include "ddack.h"
#include "ddack_estimator.h"

#define DDACK_GC_INTERVAL	HZ

static u32 ddack_bucket(const struct ddack_table *t, const struct ddack_key *key)
{
	BUILD_BUG_ON(sizeof(*key) % sizeof(u32));
	return jhash2((const u32 *)key, sizeof(*key) / sizeof(u32), t->seed) &
	       (BIT(DDACK_HASH_BITS) - 1);
}

int ddack_table_init(struct ddack_net *dn)
{
	struct ddack_table *t;
	int i;

	t = kvzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(t->buckets); i++) {
		INIT_HLIST_HEAD(&t->buckets[i]);
		spin_lock_init(&t->locks[i]);
	}
	t->seed = get_random_u32();
	atomic_set(&t->count, 0);
	dn->table = t;
	return 0;
}

u32 ddack_delay_us(struct ddack_net *dn)
{
	u32 est;

	if (!READ_ONCE(dn->cfg.adaptive))
		return READ_ONCE(dn->cfg.delay_us);
	est = READ_ONCE(dn->est_us);
	if (!est)	/* no hole has filled yet: start from delay_us */
		return READ_ONCE(dn->cfg.delay_us);
	return ddack_est_delay(est, READ_ONCE(dn->cfg.adaptive_margin_pct),
			       READ_ONCE(dn->cfg.delay_min_us),
			       READ_ONCE(dn->cfg.delay_max_us));
}

/* Caller holds RCU (the hook runs under it). */
static struct ddack_flow *ddack_lookup(struct ddack_table *t,
				       const struct ddack_key *key, u32 bucket)
{
	struct ddack_flow *f;

	hlist_for_each_entry_rcu(f, &t->buckets[bucket], node)
		if (!memcmp(&f->key, key, sizeof(*key)))
			return f;
	return NULL;
}

static void ddack_send(struct ddack_net *dn,
		       int (*okfn)(struct net *, struct sock *, struct sk_buff *),
		       struct sk_buff_head *list)
{
	struct sk_buff *skb;

	/*
	 * Mirror the context the hook was called in: RCU held (the route
	 * lookup of the output path expects it); BHs are disabled by our
	 * callers.  __skb_dequeue() clears skb->next, which the output path
	 * insists on.
	 */
	while ((skb = __skb_dequeue(list))) {
		rcu_read_lock();
		okfn(dn->net, skb->sk, skb);
		rcu_read_unlock();
	}
}

static void ddack_free(struct sk_buff_head *list, bool consumed)
{
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(list))) {
		if (consumed)
			consume_skb(skb);
		else
			kfree_skb(skb);
	}
}

static enum hrtimer_restart ddack_timer_fn(struct hrtimer *timer)
{
	struct ddack_flow *f = container_of(timer, struct ddack_flow, timer);
	int (*okfn)(struct net *, struct sock *, struct sk_buff *) = NULL;
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	struct ddack_net *dn = f->dn;
	struct sk_buff_head out;
	ktime_t now = ktime_get();
	u32 pace;

	__skb_queue_head_init(&out);
	spin_lock(&f->lock);	/* soft hrtimer: BHs are already off */
	if (f->dead || skb_queue_empty(&f->held))
		goto unlock;
	/*
	 * The timer may belong to an earlier episode whose cancel raced with
	 * this callback; never release before this episode's deadline.
	 */
	if (ktime_before(now, f->release_at)) {
		hrtimer_set_expires(timer, f->release_at);
		ret = HRTIMER_RESTART;
		goto unlock;
	}
	if (!f->released) {
		f->released = true;
		f->released_at = now;
		ddack_stat_inc(dn, DDACK_STAT_EPISODES_RELEASED);
	}
	pace = READ_ONCE(dn->cfg.pace_us);
	if (pace) {
		__skb_queue_tail(&out, __skb_dequeue(&f->held));
		if (!skb_queue_empty(&f->held)) {
			f->release_at = ktime_add_us(now, pace);
			hrtimer_set_expires(timer, f->release_at);
			ret = HRTIMER_RESTART;
		}
	} else {
		skb_queue_splice_init(&f->held, &out);
	}
	okfn = f->okfn;
unlock:
	spin_unlock(&f->lock);
	if (okfn) {
		ddack_stat_add(dn, DDACK_STAT_RELEASED, skb_queue_len(&out));
		ddack_send(dn, okfn, &out);
	}
	return ret;
}

/* Feed one episode's fill time to adaptive d.  Caller holds f->lock. */
static void ddack_adapt(struct ddack_net *dn, struct ddack_flow *f,
			ktime_t now, u32 rcv_rtt_us)
{
	u32 fill_us, est;

	if (!READ_ONCE(dn->cfg.adaptive))
		return;
	/*
	 * A fill that comes more than half a round trip after our release is
	 * most likely the sender's retransmission, prompted by what we
	 * released: it measures the sender, not the local repair that d
	 * has to wait for.  Counting it would make d grow with every
	 * congestion loss (fill = d + RTT), without bound.
	 */
	if (f->released &&
	    (!rcv_rtt_us ||
	     ktime_us_delta(now, f->released_at) > rcv_rtt_us / 2)) {
		ddack_stat_inc(dn, DDACK_STAT_ADAPT_IGNORED);
		return;
	}
	fill_us = min_t(s64, ktime_us_delta(now, f->episode_start),
			DDACK_EST_MAX_US);
	spin_lock(&dn->est_lock);
	est = ddack_est_update(dn->est_us, fill_us,
			       READ_ONCE(dn->cfg.adaptive_pct));
	WRITE_ONCE(dn->est_us, est);
	spin_unlock(&dn->est_lock);
	ddack_stat_inc(dn, DDACK_STAT_ADAPT_SAMPLES);
}

/*
 * The cumulative ACK advanced: the hole is filled.  Held dupacks are
 * moved to @drop (to be freed by the caller) and the timer stopped.
 * Caller holds f->lock.
 */
static void ddack_episode_end(struct ddack_net *dn, struct ddack_flow *f,
			      struct sk_buff_head *drop, ktime_t now,
			      u32 rcv_rtt_us)
{
	if (!f->dupcnt)
		return;
	if (!skb_queue_empty(&f->held)) {
		ddack_stat_add(dn, DDACK_STAT_DISCARDED,
			       skb_queue_len(&f->held));
		/* Filled in time, unless pacing had begun the release. */
		if (!f->released)
			ddack_stat_inc(dn, DDACK_STAT_EPISODES_FILLED);
		skb_queue_splice_tail_init(&f->held, drop);
		/* -1 (callback running) is fine: it finds nothing due. */
		hrtimer_try_to_cancel(&f->timer);
	}
	ddack_adapt(dn, f, now, rcv_rtt_us);
	f->dupcnt = 0;
	f->released = false;
}

static void ddack_flow_create(struct ddack_net *dn, const struct ddack_pkt *pkt,
			      const struct sock *sk, u32 bucket)
{
	struct ddack_table *t = dn->table;
	struct ddack_flow *f;

	if (atomic_inc_return(&t->count) > READ_ONCE(dn->cfg.max_flows)) {
		atomic_dec(&t->count);
		ddack_stat_inc(dn, DDACK_STAT_FLOWS_UNTRACKED);
		return;
	}
	f = kzalloc(sizeof(*f), GFP_ATOMIC);
	if (!f) {
		atomic_dec(&t->count);
		ddack_stat_inc(dn, DDACK_STAT_ERRORS);
		return;
	}
	f->key = pkt->key;
	f->dn = dn;
	f->sk = sk;
	f->ack_valid = true;
	f->last_ack = pkt->ack;
	f->last_win = pkt->win;
	f->last_seen = jiffies;
	spin_lock_init(&f->lock);
	__skb_queue_head_init(&f->held);
	INIT_LIST_HEAD(&f->gc_node);
	ddack_hrtimer_setup(&f->timer, ddack_timer_fn, CLOCK_MONOTONIC,
			    HRTIMER_MODE_ABS_SOFT);

	spin_lock_bh(&t->locks[bucket]);
	if (ddack_lookup(t, &pkt->key, bucket)) {
		/* Another CPU created it first; its entry wins. */
		spin_unlock_bh(&t->locks[bucket]);
		atomic_dec(&t->count);
		kfree(f);
		return;
	}
	hlist_add_head_rcu(&f->node, &t->buckets[bucket]);
	spin_unlock_bh(&t->locks[bucket]);
	ddack_stat_inc(dn, DDACK_STAT_FLOWS_CREATED);
	queue_delayed_work(system_power_efficient_wq, &dn->gc,
			   DDACK_GC_INTERVAL);
}

/*
 * One outgoing TCP segment of a local socket.  Returns the hook's verdict:
 * NF_STOLEN when the skb is now held by the flow.
 */
unsigned int ddack_flow_packet(struct ddack_net *dn, struct sk_buff *skb,
			       const struct nf_hook_state *state,
			       const struct ddack_pkt *pkt)
{
	struct ddack_table *t = dn->table;
	unsigned int verdict = NF_ACCEPT;
	struct sk_buff_head discard, evict;
	bool strip = false, arm = false;
	struct ddack_flow *f;
	u32 bucket, thresh, d;
	ktime_t now;
	int mode;

	bucket = ddack_bucket(t, &pkt->key);
	f = ddack_lookup(t, &pkt->key, bucket);
	if (!f) {
		if (pkt->pure_ack && !pkt->ends_flow)
			ddack_flow_create(dn, pkt, skb->sk, bucket);
		return NF_ACCEPT;
	}

	__skb_queue_head_init(&discard);
	__skb_queue_head_init(&evict);
	mode = READ_ONCE(dn->cfg.sack_mode);
	d = ddack_delay_us(dn);
	now = ktime_get();
	spin_lock_bh(&f->lock);
	if (f->dead)
		goto unlock;
	f->last_seen = jiffies;

	if (unlikely(f->sk != skb->sk)) {
		/* The 4-tuple was reused by a new connection: start over. */
		ddack_stat_add(dn, DDACK_STAT_FLUSHED, skb_queue_len(&f->held));
		skb_queue_splice_tail_init(&f->held, &evict);
		hrtimer_try_to_cancel(&f->timer);
		f->sk = skb->sk;
		f->closed = false;
		f->ack_valid = false;
		f->dupcnt = 0;
		f->released = false;
	}
	if (pkt->ends_flow) {
		ddack_stat_add(dn, DDACK_STAT_FLUSHED, skb_queue_len(&f->held));
		skb_queue_splice_tail_init(&f->held, &evict);
		hrtimer_try_to_cancel(&f->timer);
		f->closed = true;
		f->dupcnt = 0;
		goto unlock;
	}
	if (f->closed)
		goto unlock;

	if (!f->ack_valid || after(pkt->ack, f->last_ack)) {
		ddack_episode_end(dn, f, &discard, now, pkt->rcv_rtt_us);
		f->ack_valid = true;
		f->last_ack = pkt->ack;
		f->last_win = pkt->win;
		goto strip_check;
	}
	/* Data with a piggy-backed ACK, or an older ACK: not ours to touch. */
	if (!pkt->pure_ack || pkt->ack != f->last_ack)
		goto unlock;
	if (pkt->win != f->last_win) {
		/* A window update is not a duplicate (RFC 5681, Linux). */
		f->last_win = pkt->win;
		goto strip_check;
	}

	ddack_stat_inc(dn, DDACK_STAT_DUPACKS);
	if (f->dupcnt++ == 0) {
		f->episode_start = now;
		f->released = false;
		ddack_stat_inc(dn, DDACK_STAT_EPISODES);
	}
	thresh = READ_ONCE(dn->cfg.threshold);
	if (mode == DDACK_SACK_HOLD && pkt->has_sack)
		thresh = 0;
	if (f->dupcnt <= thresh || !d || f->released) {
		ddack_stat_inc(dn, DDACK_STAT_IMMEDIATE);
		goto strip_check;
	}
	/* The route was attached without a reference (noref dst). */
	if (!skb_dst_force(skb)) {
		ddack_stat_inc(dn, DDACK_STAT_ERRORS);
		goto unlock;
	}
	if (skb_queue_empty(&f->held)) {
		f->release_at = ktime_add_us(now, d);
		f->okfn = state->okfn;
		arm = true;
	}
	__skb_queue_tail(&f->held, skb);
	ddack_stat_inc(dn, DDACK_STAT_HELD);
	if (skb_queue_len(&f->held) > READ_ONCE(dn->cfg.max_held)) {
		__skb_queue_tail(&evict, __skb_dequeue(&f->held));
		ddack_stat_inc(dn, DDACK_STAT_EVICTED);
	}
	if (arm)
		hrtimer_start(&f->timer, f->release_at, HRTIMER_MODE_ABS_SOFT);
	verdict = NF_STOLEN;
	goto unlock;
strip_check:
	/*
	 * sack_mode strip/hold: until this episode's dupacks are released,
	 * no ACK that leaves now may announce an open hole with SACK blocks
	 * (early dupacks, window updates, an ACK filling one hole of two);
	 * a RACK sender would start recovery from any of them.  SACK blocks
	 * at or below the cumulative ACK (D-SACK alone) pass untouched.
	 */
	strip = mode != DDACK_SACK_KEEP && d && pkt->sack_hole &&
		!f->released;
unlock:
	spin_unlock_bh(&f->lock);
	ddack_free(&discard, true);
	ddack_free(&evict, false);
	if (strip && ddack_strip_sack(skb, pkt) == 0)
		ddack_stat_inc(dn, DDACK_STAT_SACK_STRIPPED);
	return verdict;
}

/*
 * Unlink every flow for which @expired says so, then, outside all table
 * locks, wait for its timer, send or free what it still held and free it
 * after an RCU grace period.  Process context only.
 */
static void ddack_reap(struct ddack_net *dn,
		       bool (*expired)(struct ddack_flow *f, unsigned long arg),
		       unsigned long arg, bool transmit)
{
	int (*okfn)(struct net *, struct sock *, struct sk_buff *) = NULL;
	struct ddack_table *t = dn->table;
	struct sk_buff_head held;
	struct ddack_flow *f, *tmp;
	struct hlist_node *n;
	LIST_HEAD(reap);
	int i;

	__skb_queue_head_init(&held);
	for (i = 0; i < ARRAY_SIZE(t->buckets); i++) {
		if (hlist_empty(&t->buckets[i]))
			continue;
		spin_lock_bh(&t->locks[i]);
		hlist_for_each_entry_safe(f, n, &t->buckets[i], node) {
			spin_lock(&f->lock);
			if (!expired(f, arg)) {
				spin_unlock(&f->lock);
				continue;
			}
			f->dead = true;
			if (!skb_queue_empty(&f->held))
				okfn = f->okfn;
			skb_queue_splice_tail_init(&f->held, &held);
			spin_unlock(&f->lock);
			hlist_del_rcu(&f->node);
			list_add(&f->gc_node, &reap);
			atomic_dec(&t->count);
		}
		spin_unlock_bh(&t->locks[i]);
	}

	list_for_each_entry_safe(f, tmp, &reap, gc_node) {
		/* Waits for a callback running on another CPU. */
		hrtimer_cancel(&f->timer);
		list_del(&f->gc_node);
		ddack_stat_inc(dn, DDACK_STAT_FLOWS_EXPIRED);
		kfree_rcu(f, rcu);
	}

	if (skb_queue_empty(&held))
		return;
	/*
	 * One continuation for all: every held skb was stolen at LOCAL_OUT,
	 * whose continuation is dst_output() for IPv4 and IPv6 alike.
	 */
	if (transmit && okfn) {
		ddack_stat_add(dn, DDACK_STAT_FLUSH_SENT, skb_queue_len(&held));
		local_bh_disable();
		ddack_send(dn, okfn, &held);
		local_bh_enable();
	} else {
		ddack_stat_add(dn, DDACK_STAT_FLUSHED, skb_queue_len(&held));
		ddack_free(&held, false);
	}
}

static bool ddack_gc_expired(struct ddack_flow *f, unsigned long timeout)
{
	if (!skb_queue_empty(&f->held))
		return false;	/* its timer sends them within d */
	return f->closed || time_after(jiffies, f->last_seen + timeout);
}

void ddack_gc_work(struct work_struct *work)
{
	struct ddack_net *dn = container_of(to_delayed_work(work),
					    struct ddack_net, gc);

	ddack_reap(dn, ddack_gc_expired,
		   (unsigned long)READ_ONCE(dn->cfg.flow_timeout_s) * HZ, false);
	if (atomic_read(&dn->table->count))
		queue_delayed_work(system_power_efficient_wq, &dn->gc,
				   DDACK_GC_INTERVAL);
}

static bool ddack_all(struct ddack_flow *f, unsigned long unused)
{
	return true;
}

/*
 * Remove every flow.  The hooks must already be unregistered and the
 * garbage collector stopped.  @transmit: send what is held (disable,
 * module unload: the connections live on) or free it (netns exit: the
 * devices are gone).
 */
void ddack_table_flush(struct ddack_net *dn, bool transmit)
{
	ddack_reap(dn, ddack_all, 0, transmit);
}
