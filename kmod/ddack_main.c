// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcp_ddack: receiver-side Delayed Duplicate ACKs, per network namespace.
 *
 * Vaidya, Mehta, Perkins, Montenegro, "Delayed Duplicate Acknowledgements:
 * a TCP-unaware approach to improve performance of TCP over wireless",
 * 1999, §5: the receiver sends the first two dupacks of a hole at once and
 * delays the third and later ones by d; if the hole fills within d they
 * are never sent, otherwise they all leave after d.  A link layer that
 * repairs the loss within d thus never triggers the sender's fast
 * retransmit.
 *
 * This file: module and namespace life cycle, the knobs under
 * net.tcp_ddack.* (ddack_knobs.h) and the counters in
 * /proc/net/stat/tcp_ddack.  Nothing happens in a namespace until
 * net.tcp_ddack.enabled = 1 there.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "ddack.h"

unsigned int ddack_net_id __read_mostly;

/* ------------------------------------------------------------- knobs */

/* delay_min_us, delay_max_us: each in range, and min <= max. */
static int ddack_sysctl_bound(AIRTCP_CTL_TABLE *table, int write,
			      void *buffer, size_t *lenp, loff_t *ppos)
{
	bool is_min = !strcmp(table->procname, "delay_min_us");
	struct ddack_net *dn = is_min ?
		container_of(table->data, struct ddack_net, cfg.delay_min_us) :
		container_of(table->data, struct ddack_net, cfg.delay_max_us);
	struct ctl_table tmp = *table;
	int val, ret;

	if (!write)
		return proc_dointvec_minmax(&tmp, write, buffer, lenp, ppos);

	mutex_lock(&dn->pn.mutex);
	val = *(int *)table->data;
	tmp.data = &val;
	ret = proc_dointvec_minmax(&tmp, write, buffer, lenp, ppos);
	if (!ret && (is_min ? val > dn->cfg.delay_max_us :
			      val < dn->cfg.delay_min_us))
		ret = -EINVAL;
	if (!ret)
		WRITE_ONCE(*(int *)table->data, val);
	mutex_unlock(&dn->pn.mutex);
	return ret;
}

/* adaptive: a fresh estimate every time the mode is switched on. */
static int ddack_sysctl_adaptive(AIRTCP_CTL_TABLE *table, int write,
				 void *buffer, size_t *lenp, loff_t *ppos)
{
	struct ddack_net *dn = container_of(table->data, struct ddack_net,
					    cfg.adaptive);
	int ret = proc_dointvec_minmax(table, write, buffer, lenp, ppos);

	if (write && !ret) {
		spin_lock_bh(&dn->est_lock);
		WRITE_ONCE(dn->est_us, 0);
		spin_unlock_bh(&dn->est_lock);
	}
	return ret;
}

/* delay_current_us (read-only): the d in force, fixed or adaptive. */
static int ddack_sysctl_current(AIRTCP_CTL_TABLE *table, int write,
				void *buffer, size_t *lenp, loff_t *ppos)
{
	struct ddack_net *dn = container_of(table->data, struct ddack_net,
					    cfg.delay_current_us);
	struct ctl_table tmp = *table;
	int val;

	if (write)
		return -EPERM;
	val = ddack_delay_us(dn);
	tmp.data = &val;
	return proc_dointvec(&tmp, write, buffer, lenp, ppos);
}

#define AIRTCP_KNOB_OWNER struct ddack_net
#define AIRTCP_KNOB_LIST "ddack_knobs.h"
static const struct airtcp_knob ddack_knobs[] = {
#include "airtcp_knobs.h"
};

/* ---------------------------------------------- /proc/net/stat/tcp_ddack */

/* Column names; "entries" (flows tracked now) is a gauge, not per CPU. */
static const char *const ddack_stat_names[DDACK_STAT_MAX] = {
	[DDACK_STAT_ACKS]		= "acks",
	[DDACK_STAT_DUPACKS]		= "dupacks",
	[DDACK_STAT_IMMEDIATE]		= "immediate",
	[DDACK_STAT_HELD]		= "held",
	[DDACK_STAT_DISCARDED]		= "discarded",
	[DDACK_STAT_RELEASED]		= "released",
	[DDACK_STAT_EVICTED]		= "evicted",
	[DDACK_STAT_FLUSHED]		= "flushed",
	[DDACK_STAT_FLUSH_SENT]		= "flush_sent",
	[DDACK_STAT_EPISODES]		= "episodes",
	[DDACK_STAT_EPISODES_FILLED]	= "episodes_filled",
	[DDACK_STAT_EPISODES_RELEASED]	= "episodes_released",
	[DDACK_STAT_SACK_STRIPPED]	= "sack_stripped",
	[DDACK_STAT_FLOWS_CREATED]	= "flows_created",
	[DDACK_STAT_FLOWS_EXPIRED]	= "flows_expired",
	[DDACK_STAT_FLOWS_UNTRACKED]	= "flows_untracked",
	[DDACK_STAT_ADAPT_SAMPLES]	= "adapt_samples",
	[DDACK_STAT_ADAPT_IGNORED]	= "adapt_ignored",
	[DDACK_STAT_ERRORS]		= "errors",
	[DDACK_STAT_LIMITED]		= "limited",
	[DDACK_STAT_CAPPED]		= "capped",
	[DDACK_STAT_GC_SENT]		= "gc_sent",
	[DDACK_STAT_ASIDE_SACK]		= "aside_sack",
	[DDACK_STAT_ASIDE_UNFILLED]	= "aside_unfilled",
};

static unsigned int ddack_entries(struct airtcp_pernet *pn)
{
	return atomic_read(&container_of(pn, struct ddack_net, pn)->table->count);
}

static const struct airtcp_pernet_desc ddack_desc = {
	.name		= "tcp_ddack",
	.sysctl_path	= "net/tcp_ddack",
	.net_id		= &ddack_net_id,
	.knobs		= ddack_knobs,
	.n_knobs	= ARRAY_SIZE(ddack_knobs),
	.stat_names	= ddack_stat_names,
	.n_stats	= DDACK_STAT_MAX,
	.gauge_name	= "entries",
	.gauge		= ddack_entries,
};

/* ------------------------------------------------------- per namespace */

static int __net_init ddack_net_init(struct net *net)
{
	struct ddack_net *dn = ddack_pernet(net);
	int ret;

	spin_lock_init(&dn->est_lock);
	atomic_set(&dn->held, 0);
	INIT_DELAYED_WORK(&dn->gc, ddack_gc_work);
	ret = ddack_table_init(dn);
	if (ret)
		return ret;
	/* Last: from here on, enabled may be written. */
	ret = airtcp_pernet_init(&dn->pn, net, &ddack_desc);
	if (ret)
		kvfree(dn->table);
	return ret;
}

static void __net_exit ddack_net_pre_exit(struct net *net)
{
	airtcp_pernet_pre_exit(&ddack_pernet(net)->pn);
}

static void __net_exit ddack_net_exit(struct net *net)
{
	struct ddack_net *dn = ddack_pernet(net);

	cancel_delayed_work_sync(&dn->gc);
	/*
	 * On module unload the namespace lives on (check_net()): send what
	 * is held.  A dying namespace has lost its devices: free it.
	 */
	ddack_table_flush(dn, check_net(net));
	airtcp_pernet_exit(&dn->pn);
	kvfree(dn->table);
}

static struct pernet_operations ddack_net_ops = {
	.init		= ddack_net_init,
	.pre_exit	= ddack_net_pre_exit,
	.exit		= ddack_net_exit,
	.id		= &ddack_net_id,
	.size		= sizeof(struct ddack_net),
};

/* ------------------------------------------------------------- module */

static int __init ddack_init(void)
{
	int ret;

	BUILD_BUG_ON(offsetof(struct ddack_net, pn));
	ret = register_pernet_subsys(&ddack_net_ops);
	if (ret)
		return ret;
	pr_info("loaded; off in every namespace until net.tcp_ddack.enabled=1\n");
	return 0;
}

static void __exit ddack_exit(void)
{
	/* Runs pre_exit and exit for every namespace: hooks, timers, skbs. */
	unregister_pernet_subsys(&ddack_net_ops);
	/* Flows are freed by kfree_rcu(); let those grace periods end. */
	rcu_barrier();
}

module_init(ddack_init);
module_exit(ddack_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("airtcp developers");
MODULE_DESCRIPTION("Receiver-side Delayed Duplicate ACKs (Vaidya et al.), per network namespace");
MODULE_VERSION(AIRTCP_VERSION);
