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
 * This file: module and namespace life cycle, the sysctls under
 * net.tcp_ddack.* and the counters in /proc/net/stat/tcp_ddack.  Nothing
 * happens in a namespace until net.tcp_ddack.enabled = 1 there.
 */
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sysctl.h>
#include <net/net_namespace.h>

#include "airtcp_pernet.h"
#include "ddack.h"

unsigned int ddack_net_id __read_mostly;

static const struct ddack_cfg ddack_defaults = {
	.enabled		= 0,
	.delay_us		= 80000,	/* Vaidya's d = 80 ms */
	.threshold		= 2,		/* dupacks sent at once */
	.pace_us		= 0,		/* 0: release as a burst */
	.max_held		= 64,
	.max_flows		= 4096,
	.flow_timeout_s		= 30,
	.sack_mode		= DDACK_SACK_KEEP,
	.adaptive		= 0,
	.adaptive_pct		= 90,
	.adaptive_margin_pct	= 125,
	.delay_min_us		= 5000,
	.delay_max_us		= 200000,	/* the paper's largest d */
};

/* ------------------------------------------------------------- sysctls */

static int ddack_zero;
static int ddack_one = 1;
static int ddack_two = 2;
static int ddack_fifty = 50;
static int ddack_99 = 99;
static int ddack_100 = 100;
static int ddack_1000 = 1000;
static int ddack_4096 = 4096;
static int ddack_3600 = 3600;
static int ddack_one_s_us = USEC_PER_SEC;
static int ddack_ten_s_us = 10 * USEC_PER_SEC;
static int ddack_flows_max = 1 << 20;

#define DDACK_CFG(field) AIRTCP_CFG_OFFSET(struct ddack_cfg, field)

static struct ddack_net *ddack_from_table(const struct ctl_table *table,
					  size_t offset)
{
	return (struct ddack_net *)((char *)table->data - offset -
				    offsetof(struct ddack_net, cfg));
}

/* enabled: registers or unregisters the hooks of this namespace. */
static int ddack_sysctl_enabled(struct ctl_table *table, int write,
				void *buffer, size_t *lenp, loff_t *ppos)
{
	struct ddack_net *dn = ddack_from_table(table,
			offsetof(struct ddack_cfg, enabled));
	struct ctl_table tmp = *table;
	int val, ret;

	if (!write)
		return proc_dointvec_minmax(table, write, buffer, lenp, ppos);

	mutex_lock(&dn->mutex);
	val = dn->cfg.enabled;
	tmp.data = &val;
	ret = proc_dointvec_minmax(&tmp, write, buffer, lenp, ppos);
	if (ret || val == dn->cfg.enabled)
		goto out;
	if (val) {
		ret = dn->exiting ? -ENODEV : ddack_hooks_register(dn->net);
		if (ret)
			goto out;
		dn->hooks_on = true;
	} else {
		ddack_hooks_unregister(dn->net);
		dn->hooks_on = false;
		cancel_delayed_work_sync(&dn->gc);
		/* The connections live on: what is held goes out now. */
		ddack_table_flush(dn, true);
	}
	WRITE_ONCE(dn->cfg.enabled, val);
out:
	mutex_unlock(&dn->mutex);
	return ret;
}

/* delay_min_us, delay_max_us: each in range, and min <= max. */
static int ddack_sysctl_bound(struct ctl_table *table, int write,
			      void *buffer, size_t *lenp, loff_t *ppos)
{
	bool is_min = !strcmp(table->procname, "delay_min_us");
	struct ddack_net *dn = ddack_from_table(table, is_min ?
			offsetof(struct ddack_cfg, delay_min_us) :
			offsetof(struct ddack_cfg, delay_max_us));
	struct ctl_table tmp = *table;
	int val, ret;

	if (!write)
		return proc_dointvec_minmax(table, write, buffer, lenp, ppos);

	mutex_lock(&dn->mutex);
	val = *(int *)table->data;
	tmp.data = &val;
	ret = proc_dointvec_minmax(&tmp, write, buffer, lenp, ppos);
	if (!ret && (is_min ? val > dn->cfg.delay_max_us :
			      val < dn->cfg.delay_min_us))
		ret = -EINVAL;
	if (!ret)
		WRITE_ONCE(*(int *)table->data, val);
	mutex_unlock(&dn->mutex);
	return ret;
}

/* adaptive: a fresh estimate every time the mode is switched on. */
static int ddack_sysctl_adaptive(struct ctl_table *table, int write,
				 void *buffer, size_t *lenp, loff_t *ppos)
{
	struct ddack_net *dn = ddack_from_table(table,
			offsetof(struct ddack_cfg, adaptive));
	int ret = proc_dointvec_minmax(table, write, buffer, lenp, ppos);

	if (write && !ret) {
		spin_lock_bh(&dn->est_lock);
		WRITE_ONCE(dn->est_us, 0);
		spin_unlock_bh(&dn->est_lock);
	}
	return ret;
}

/* delay_current_us (read-only): the d in force, fixed or adaptive. */
static int ddack_sysctl_current(struct ctl_table *table, int write,
				void *buffer, size_t *lenp, loff_t *ppos)
{
	struct ddack_net *dn = ddack_from_table(table,
			offsetof(struct ddack_cfg, delay_current_us));
	struct ctl_table tmp = *table;
	int val;

	if (write)
		return -EPERM;
	val = ddack_delay_us(dn);
	tmp.data = &val;
	return proc_dointvec(&tmp, write, buffer, lenp, ppos);
}

#define DDACK_KNOB(name, handler, lo, hi) {				\
	.procname	= #name,					\
	.data		= DDACK_CFG(name),				\
	.maxlen		= sizeof(int),					\
	.mode		= 0644,						\
	.proc_handler	= handler,					\
	.extra1		= lo,						\
	.extra2		= hi,						\
}

/* .data holds the offset in struct ddack_cfg until made per netns. */
static const struct ctl_table ddack_sysctl_template[] = {
	DDACK_KNOB(enabled, ddack_sysctl_enabled, &ddack_zero, &ddack_one),
	DDACK_KNOB(delay_us, proc_dointvec_minmax, &ddack_zero, &ddack_ten_s_us),
	DDACK_KNOB(threshold, proc_dointvec_minmax, &ddack_zero, &ddack_1000),
	DDACK_KNOB(pace_us, proc_dointvec_minmax, &ddack_zero, &ddack_one_s_us),
	DDACK_KNOB(max_held, proc_dointvec_minmax, &ddack_one, &ddack_4096),
	DDACK_KNOB(max_flows, proc_dointvec_minmax, &ddack_one, &ddack_flows_max),
	DDACK_KNOB(flow_timeout_s, proc_dointvec_minmax, &ddack_one, &ddack_3600),
	DDACK_KNOB(sack_mode, proc_dointvec_minmax, &ddack_zero, &ddack_two),
	DDACK_KNOB(adaptive, ddack_sysctl_adaptive, &ddack_zero, &ddack_one),
	DDACK_KNOB(adaptive_pct, proc_dointvec_minmax, &ddack_fifty, &ddack_99),
	DDACK_KNOB(adaptive_margin_pct, proc_dointvec_minmax, &ddack_100,
		   &ddack_1000),
	DDACK_KNOB(delay_min_us, ddack_sysctl_bound, &ddack_zero, &ddack_ten_s_us),
	DDACK_KNOB(delay_max_us, ddack_sysctl_bound, &ddack_zero, &ddack_ten_s_us),
	{
		.procname	= "delay_current_us",
		.data		= DDACK_CFG(delay_current_us),
		.maxlen		= sizeof(int),
		.mode		= 0444,
		.proc_handler	= ddack_sysctl_current,
	},
	{ }
};

static int ddack_sysctl_init(struct ddack_net *dn)
{
	dn->sysctl = airtcp_sysctl_register(dn->net, "net/tcp_ddack",
					    ddack_sysctl_template,
					    ARRAY_SIZE(ddack_sysctl_template) - 1,
					    &dn->cfg);
	return dn->sysctl ? 0 : -ENOMEM;
}

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
};

static u64 __percpu *ddack_counters(const struct net *net)
{
	return (u64 __percpu *)ddack_pernet(net)->stats;
}

static unsigned int ddack_entries(const struct net *net)
{
	return atomic_read(&ddack_pernet(net)->table->count);
}

/* The lnstat format of /proc/net/stat/: a header, one hex row per CPU. */
static const struct airtcp_stat_desc ddack_stat_desc = {
	.names		= ddack_stat_names,
	.n		= DDACK_STAT_MAX,
	.gauge_name	= "entries",
	.counters	= ddack_counters,
	.gauge		= ddack_entries,
};

/* ------------------------------------------------------- per namespace */

static int __net_init ddack_net_init(struct net *net)
{
	struct ddack_net *dn = ddack_pernet(net);
	int ret;

	dn->net = net;
	dn->cfg = ddack_defaults;
	dn->cfg.delay_current_us = dn->cfg.delay_us;
	mutex_init(&dn->mutex);
	spin_lock_init(&dn->est_lock);
	INIT_DELAYED_WORK(&dn->gc, ddack_gc_work);

	dn->stats = alloc_percpu(struct ddack_stats);
	if (!dn->stats)
		return -ENOMEM;
	ret = ddack_table_init(dn);
	if (ret)
		goto err_table;
	ret = ddack_sysctl_init(dn);
	if (ret)
		goto err_sysctl;
	ret = airtcp_stat_create(net, "tcp_ddack", &ddack_stat_desc);
	if (ret)
		goto err_proc;
	return 0;

err_proc:
	airtcp_sysctl_unregister(dn->sysctl);
err_sysctl:
	kvfree(dn->table);
err_table:
	free_percpu(dn->stats);
	return ret;
}

/* First, for every namespace of a batch: stop the hooks. */
static void __net_exit ddack_net_pre_exit(struct net *net)
{
	struct ddack_net *dn = ddack_pernet(net);

	mutex_lock(&dn->mutex);
	dn->exiting = true;
	if (dn->hooks_on)
		ddack_hooks_unregister(net);
	dn->hooks_on = false;
	mutex_unlock(&dn->mutex);
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
	airtcp_stat_remove(net, "tcp_ddack");
	airtcp_sysctl_unregister(dn->sysctl);
	kvfree(dn->table);
	free_percpu(dn->stats);
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
MODULE_VERSION(DDACK_VERSION);
