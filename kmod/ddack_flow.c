// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcp_ddack: the flow table, and the hands of the state machine.
 *
 * One entry per TCP connection whose receiver sends pure ACKs in this
 * netns.  What happens to a segment and to what a flow holds is decided
 * by ddack_dda.c (the diagram is in ddack_dda.h); this file carries it
 * out: it queues and frees held skbs, arms and stops the flow's timer,
 * sends what the timer releases, feeds adaptive d and counts.
 *
 * Lifetime rules (see also Documentation/tcp_ddack.rst):
 *  - flows are found under RCU and changed under their own lock; only
 *    process context unlinks them (garbage collector, disable, netns exit),
 *    after marking them dead, and frees them after hrtimer_cancel() and an
 *    RCU grace period;
 *  - a held skb keeps its socket's memory pinned through its destructor, as
 *    in a qdisc, and its route through skb_dst_force(); it is sent with the
 *    continuation of the hook (dst_output) or freed, never leaked: every
 *    path that empties f->held either sends or frees what it took, and
 *    takes it off the namespace's count (dn->held, max_held_total);
 *  - the flow's timer is only ever started (hrtimer_start()) under the
 *    flow's lock, at the state machine's release_at; the callback never
 *    writes the expiry of a timer that may be queued again (see
 *    ddack_timer_fn()).
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

	/* Made when the namespace is: charged to whoever creates it. */
	t = kvzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
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
		okfn(dn->pn.net, skb->sk, skb);
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

/* Take @n held ACKs off the namespace's count.  Caller holds f->lock. */
static void ddack_unheld(struct ddack_net *dn, unsigned int n)
{
	if (n)
		atomic_sub(n, &dn->held);
}

/* Start the timer at the state machine's release_at.  Caller holds f->lock. */
static void ddack_arm(struct ddack_flow *f)
{
	hrtimer_start(&f->timer, ns_to_ktime(f->dda.release_at),
		      HRTIMER_MODE_ABS_SOFT);
}

/*
 * The flow's timer.  It re-arms itself with hrtimer_start() under the
 * flow's lock and returns HRTIMER_NORESTART, never with
 * hrtimer_set_expires() and HRTIMER_RESTART: while this callback waited
 * for the lock, the hook may have started the timer again (a new hold
 * after a cancel that found the callback running), and the hrtimer code
 * then has the timer queued already (__run_hrtimer(), kernel/time/
 * hrtimer.c:1757-1768 in 6.1: "hrtimer_start_range_ns() can have popped
 * in and enqueued the timer"); writing the expiry of a queued timer
 * breaks the order of its base's tree.  hrtimer_start() dequeues and
 * queues again, so whichever of the hook and this callback holds the
 * lock last sets the expiry, from the state it leaves
 * (Documentation/kernel-notes.rst §9).
 */
static enum hrtimer_restart ddack_timer_fn(struct hrtimer *timer)
{
	struct ddack_flow *f = container_of(timer, struct ddack_flow, timer);
	int (*okfn)(struct net *, struct sock *, struct sk_buff *) = NULL;
	struct ddack_net *dn = f->dn;
	struct ddack_release release;
	struct sk_buff_head out;

	__skb_queue_head_init(&out);
	spin_lock(&f->lock);	/* soft hrtimer: BHs are already off */
	if (f->dead)
		goto unlock;
	release = ddack_dda_timer(&f->dda, ktime_get_ns(),
				  skb_queue_len(&f->held),
				  READ_ONCE(dn->cfg.pace_us));
	if (release.first)
		airtcp_stat_inc(&dn->pn, DDACK_STAT_EPISODES_RELEASED);
	if (release.capped)
		airtcp_stat_inc(&dn->pn, DDACK_STAT_CAPPED);
	if (release.rearm)
		ddack_arm(f);
	if (release.send >= skb_queue_len(&f->held))
		skb_queue_splice_init(&f->held, &out);
	else
		while (release.send--)
			__skb_queue_tail(&out, __skb_dequeue(&f->held));
	ddack_unheld(dn, skb_queue_len(&out));
	if (!skb_queue_empty(&out))
		okfn = f->okfn;
unlock:
	spin_unlock(&f->lock);
	if (okfn) {
		airtcp_stat_add(&dn->pn, DDACK_STAT_RELEASED, skb_queue_len(&out));
		ddack_send(dn, okfn, &out);
	}
	return HRTIMER_NORESTART;
}

/* A hole-fill time for adaptive d.  Caller holds f->lock: BHs are off. */
static void ddack_adapt(struct ddack_net *dn, u32 fill_us)
{
	u32 est;

	spin_lock(&dn->est_lock);
	est = ddack_est_update(dn->est_us, fill_us,
			       READ_ONCE(dn->cfg.adaptive_pct));
	WRITE_ONCE(dn->est_us, est);
	spin_unlock(&dn->est_lock);
}

/* The knobs the state machine reads, for one segment. */
static void ddack_params(struct ddack_net *dn, struct ddack_params *params)
{
	params->delay_us = ddack_delay_us(dn);
	params->threshold = READ_ONCE(dn->cfg.threshold);
	params->max_held = READ_ONCE(dn->cfg.max_held);
	params->sack_mode = READ_ONCE(dn->cfg.sack_mode);
	params->aside_unfilled = READ_ONCE(dn->cfg.aside_unfilled);
	params->adaptive = READ_ONCE(dn->cfg.adaptive);
}

static void ddack_count(struct ddack_net *dn, u32 events)
{
	static const u8 stat_of[] = {
		[ilog2(DDACK_EV_DUPACK)]	= DDACK_STAT_DUPACKS,
		[ilog2(DDACK_EV_EPISODE)]	= DDACK_STAT_EPISODES,
		[ilog2(DDACK_EV_IMMEDIATE)]	= DDACK_STAT_IMMEDIATE,
		[ilog2(DDACK_EV_FILLED)]	= DDACK_STAT_EPISODES_FILLED,
		[ilog2(DDACK_EV_ADAPT_SAMPLE)]	= DDACK_STAT_ADAPT_SAMPLES,
		[ilog2(DDACK_EV_ADAPT_IGNORED)]	= DDACK_STAT_ADAPT_IGNORED,
		[ilog2(DDACK_EV_LIMITED)]	= DDACK_STAT_LIMITED,
		[ilog2(DDACK_EV_ASIDE_SACK)]	= DDACK_STAT_ASIDE_SACK,
		[ilog2(DDACK_EV_ASIDE_UNFILLED)] = DDACK_STAT_ASIDE_UNFILLED,
	};
	unsigned long bits = events;
	unsigned int ev;

	for_each_set_bit(ev, &bits, ARRAY_SIZE(stat_of))
		airtcp_stat_inc(&dn->pn, stat_of[ev]);
}

static void ddack_flow_create(struct ddack_net *dn, const struct ddack_pkt *pkt,
			      const struct sock *sk, u32 bucket)
{
	struct ddack_table *t = dn->table;
	struct ddack_params params;
	struct ddack_flow *f;
	u32 events;

	if (atomic_inc_return(&t->count) > READ_ONCE(dn->cfg.max_flows)) {
		atomic_dec(&t->count);
		airtcp_stat_inc(&dn->pn, DDACK_STAT_FLOWS_UNTRACKED);
		return;
	}
	f = kzalloc(sizeof(*f), GFP_ATOMIC);
	if (!f) {
		atomic_dec(&t->count);
		airtcp_stat_inc(&dn->pn, DDACK_STAT_ERRORS);
		return;
	}
	f->key = pkt->key;
	f->dn = dn;
	f->sk = sk;
	ddack_params(dn, &params);
	events = ddack_dda_start(&f->dda, &params, &pkt->in);
	f->last_seen = pkt->in.now;
	spin_lock_init(&f->lock);
	__skb_queue_head_init(&f->held);
	INIT_LIST_HEAD(&f->gc_node);
	airtcp_hrtimer_setup(&f->timer, ddack_timer_fn, CLOCK_MONOTONIC,
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
	airtcp_stat_inc(&dn->pn, DDACK_STAT_FLOWS_CREATED);
	ddack_count(dn, events);
	queue_delayed_work(system_power_efficient_wq, &dn->gc,
			   DDACK_GC_INTERVAL);
}

/*
 * One outgoing TCP segment of a local socket: the state machine's
 * decision, with what concerns the flow done.  DDACK_HOLD: the flow has
 * the skb now (the hook returns NF_STOLEN); DDACK_PASS: the hook sends it,
 * without its SACK blocks if decision.strip says so; DDACK_DROP: its
 * route could not be kept (skb_dst_force() failed and left it without
 * one), the hook drops it.
 */
struct ddack_decision ddack_flow_packet(struct ddack_net *dn,
					struct sk_buff *skb,
					const struct nf_hook_state *state,
					struct ddack_pkt *pkt)
{
	struct ddack_decision decision = { .verdict = DDACK_PASS };
	struct ddack_table *t = dn->table;
	struct sk_buff_head discard, flush;
	struct ddack_params params;
	struct ddack_flow *f;
	u32 bucket;

	pkt->in.now = ktime_get_ns();
	bucket = ddack_bucket(t, &pkt->key);
	f = ddack_lookup(t, &pkt->key, bucket);
	if (!f) {
		if (pkt->in.pure_ack && !pkt->in.ends_flow)
			ddack_flow_create(dn, pkt, skb->sk, bucket);
		return decision;
	}

	__skb_queue_head_init(&discard);
	__skb_queue_head_init(&flush);
	ddack_params(dn, &params);
	/*
	 * Room for one more: read, not reserved, so concurrent holds on
	 * other CPUs may pass max_held_total by one each.
	 */
	pkt->in.may_hold = atomic_read(&dn->held) <
			   READ_ONCE(dn->cfg.max_held_total);
	spin_lock_bh(&f->lock);
	if (f->dead)
		goto unlock;
	f->last_seen = pkt->in.now;
	pkt->in.new_socket = f->sk != skb->sk;
	f->sk = skb->sk;
	pkt->in.held = skb_queue_len(&f->held);

	decision = ddack_dda_segment(&f->dda, &params, &pkt->in);
	/* A new connection on the 4-tuple: a flow of its own. */
	if (pkt->in.new_socket)
		airtcp_stat_inc(&dn->pn, DDACK_STAT_FLOWS_CREATED);

	if (decision.drop == DDACK_DISCARD_HELD) {
		airtcp_stat_add(&dn->pn, DDACK_STAT_DISCARDED, pkt->in.held);
		skb_queue_splice_tail_init(&f->held, &discard);
	} else if (decision.drop == DDACK_FLUSH_HELD) {
		airtcp_stat_add(&dn->pn, DDACK_STAT_FLUSHED, pkt->in.held);
		skb_queue_splice_tail_init(&f->held, &flush);
	}
	if (decision.drop != DDACK_KEEP_HELD)
		ddack_unheld(dn, pkt->in.held);
	/* -1 (callback running) is fine: it finds nothing due. */
	if (decision.cancel)
		hrtimer_try_to_cancel(&f->timer);
	if (decision.events & DDACK_EV_ADAPT_SAMPLE)
		ddack_adapt(dn, decision.fill_us);
	if (decision.verdict == DDACK_HOLD) {
		/*
		 * The route was attached without a reference (noref dst).
		 * If it cannot be kept, skb_dst_force() leaves the skb with
		 * no route at all: it cannot be sent either.  The machine
		 * believes one more is held; with none, its next hold arms
		 * the timer again.
		 */
		if (!skb_dst_force(skb)) {
			airtcp_stat_inc(&dn->pn, DDACK_STAT_ERRORS);
			decision.verdict = DDACK_DROP;
			goto unlock;
		}
		if (decision.arm)
			f->okfn = state->okfn;
		__skb_queue_tail(&f->held, skb);
		atomic_inc(&dn->held);
		airtcp_stat_inc(&dn->pn, DDACK_STAT_HELD);
		if (decision.evict) {
			__skb_queue_tail(&flush, __skb_dequeue(&f->held));
			ddack_unheld(dn, 1);
			airtcp_stat_inc(&dn->pn, DDACK_STAT_EVICTED);
		}
		if (decision.arm)
			ddack_arm(f);
	}
unlock:
	spin_unlock_bh(&f->lock);
	ddack_count(dn, decision.events);
	ddack_free(&discard, true);
	ddack_free(&flush, false);
	return decision;
}

/*
 * Unlink every flow for which @expired says so, then, outside all table
 * locks, wait for its timer, send what it still held (counted in @sent)
 * or free it (@sent = DDACK_STAT_MAX), and free the flow after an RCU
 * grace period.  Process context only.
 */
static void ddack_reap(struct ddack_net *dn,
		       bool (*expired)(struct ddack_flow *f, s64 now, s64 arg),
		       s64 arg, enum ddack_stat sent)
{
	int (*okfn)(struct net *, struct sock *, struct sk_buff *) = NULL;
	struct ddack_table *t = dn->table;
	s64 now = ktime_get_ns();
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
			if (!expired(f, now, arg)) {
				spin_unlock(&f->lock);
				continue;
			}
			f->dead = true;
			if (!skb_queue_empty(&f->held))
				okfn = f->okfn;
			ddack_unheld(dn, skb_queue_len(&f->held));
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
		airtcp_stat_inc(&dn->pn, DDACK_STAT_FLOWS_EXPIRED);
		kfree_rcu(f, rcu);
	}

	if (skb_queue_empty(&held))
		return;
	/*
	 * One continuation for all: every held skb was stolen at LOCAL_OUT,
	 * whose continuation is dst_output() for IPv4 and IPv6 alike.
	 */
	if (sent != DDACK_STAT_MAX && okfn) {
		airtcp_stat_add(&dn->pn, sent, skb_queue_len(&held));
		local_bh_disable();
		ddack_send(dn, okfn, &held);
		local_bh_enable();
	} else {
		airtcp_stat_add(&dn->pn, DDACK_STAT_FLUSHED, skb_queue_len(&held));
		ddack_free(&held, false);
	}
}

/*
 * Closed, or idle for @timeout_ns: a flow that holds ACKs once those are
 * past the hold cap too (ddack_dda_expired()); its timer should have
 * sent them, the collector does.
 */
static bool ddack_gc_expired(struct ddack_flow *f, s64 now, s64 timeout_ns)
{
	return ddack_dda_expired(&f->dda, now, f->last_seen, timeout_ns,
				 skb_queue_len(&f->held));
}

void ddack_gc_work(struct work_struct *work)
{
	struct ddack_net *dn = container_of(to_delayed_work(work),
					    struct ddack_net, gc);

	ddack_reap(dn, ddack_gc_expired,
		   (s64)READ_ONCE(dn->cfg.flow_timeout_s) * NSEC_PER_SEC,
		   DDACK_STAT_GC_SENT);
	if (atomic_read(&dn->table->count))
		queue_delayed_work(system_power_efficient_wq, &dn->gc,
				   DDACK_GC_INTERVAL);
}

static bool ddack_all(struct ddack_flow *f, s64 now, s64 unused)
{
	return true;
}

/*
 * enabled = 0, once the hooks are out: the connections live on, so what
 * is held goes out now.
 */
void ddack_flow_drain(struct net *net)
{
	struct ddack_net *dn = ddack_pernet(net);

	cancel_delayed_work_sync(&dn->gc);
	ddack_table_flush(dn, true);
}

/*
 * Remove every flow.  The hooks must already be unregistered and the
 * garbage collector stopped.  @transmit: send what is held (disable,
 * module unload: the connections live on) or free it (netns exit: the
 * devices are gone).
 */
void ddack_table_flush(struct ddack_net *dn, bool transmit)
{
	ddack_reap(dn, ddack_all, 0, transmit ? DDACK_STAT_FLUSH_SENT : DDACK_STAT_MAX);
}
