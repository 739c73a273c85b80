// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-network-namespace plumbing of the airtcp modules (airtcp_pernet.h).
 * Compiled into each module through <module>_shared.c.
 */
#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "airtcp_pernet.h"

/* ------------------------------------------------------------- sysctls */

/*
 * A switch: 0 or 1, written under the mutex.  Its entry's extra1 is the
 * namespace's airtcp_pernet and extra2 its struct airtcp_switch (set by
 * airtcp_sysctl_register()), so the range is this handler's own.  What
 * counts is whether the hooks are in: after pre_exit has taken them out,
 * a 0 changes nothing and a 1 is refused.
 */
int airtcp_sysctl_switch(AIRTCP_CTL_TABLE *table, int write, void *buffer,
			 size_t *lenp, loff_t *ppos)
{
	const struct airtcp_switch *sw = table->extra2;
	struct airtcp_pernet *pn = table->extra1;
	struct ctl_table tmp = *table;
	int val, ret;
	bool on;

	tmp.extra1 = SYSCTL_ZERO;
	tmp.extra2 = SYSCTL_ONE;
	if (!write)
		return proc_dointvec_minmax(&tmp, write, buffer, lenp, ppos);

	mutex_lock(&pn->mutex);
	val = READ_ONCE(*(int *)table->data);
	tmp.data = &val;
	ret = proc_dointvec_minmax(&tmp, write, buffer, lenp, ppos);
	if (ret)
		goto out;
	on = test_bit(sw->bit, &pn->hooked);
	if (val && !on) {
		ret = pn->exiting ? -ENODEV :
		      nf_register_net_hooks(pn->net, sw->ops, sw->n_ops);
		if (ret)
			goto out;
		__set_bit(sw->bit, &pn->hooked);
	} else if (!val && on) {
		/* Returns after a grace period: no hook runs any more. */
		nf_unregister_net_hooks(pn->net, sw->ops, sw->n_ops);
		__clear_bit(sw->bit, &pn->hooked);
		if (sw->drain)
			sw->drain(pn->net);
	}
	WRITE_ONCE(*(int *)table->data, val);
out:
	mutex_unlock(&pn->mutex);
	return ret;
}

/*
 * A limit (AIRTCP_LIMIT): in range as any knob, and above its userns_max
 * only for a writer with CAP_NET_ADMIN in the initial user namespace.  The
 * check is made on the writer at write(), as the kernel's own restricted
 * sysctls do (proc_dointvec_minmax_sysadmin(), kernel/sysctl.c).  extra2
 * points at the knob's max, within its struct airtcp_knob.
 */
int airtcp_sysctl_limit(AIRTCP_CTL_TABLE *table, int write, void *buffer,
			size_t *lenp, loff_t *ppos)
{
	const struct airtcp_knob *knob = container_of(table->extra2,
						      struct airtcp_knob, max);
	struct ctl_table tmp = *table;
	int val, ret;

	if (!write)
		return proc_dointvec_minmax(&tmp, write, buffer, lenp, ppos);
	val = READ_ONCE(*(int *)table->data);
	tmp.data = &val;
	ret = proc_dointvec_minmax(&tmp, write, buffer, lenp, ppos);
	if (ret)
		return ret;
	if (val > knob->userns_max && !capable(CAP_NET_ADMIN))
		return -EPERM;
	WRITE_ONCE(*(int *)table->data, val);
	return 0;
}

/* The knobs' sysctl table for this namespace, every .data in @pn's struct. */
static int airtcp_sysctl_register(struct airtcp_pernet *pn)
{
	const struct airtcp_pernet_desc *desc = pn->desc;
	struct ctl_table *table;
	unsigned int i;

	/*
	 * Zeroed, and one more: the terminator kernels before 6.6 need.
	 * Per-namespace memory is charged to whoever creates the namespace.
	 */
	table = kcalloc(desc->n_knobs + 1, sizeof(*table), GFP_KERNEL_ACCOUNT);
	if (!table)
		return -ENOMEM;
	for (i = 0; i < desc->n_knobs; i++) {
		const struct airtcp_knob *knob = &desc->knobs[i];
		struct ctl_table *entry = &table[i];

		entry->procname = knob->name;
		entry->data = (char *)pn + knob->offset;
		entry->maxlen = sizeof(int);
		entry->mode = knob->mode;
		entry->proc_handler = knob->handler;
		if (knob->sw) {
			entry->extra1 = pn;
			entry->extra2 = (void *)knob->sw;
		} else {
			entry->extra1 = (void *)&knob->min;
			entry->extra2 = (void *)&knob->max;
		}
	}
	pn->sysctl = airtcp_register_net_sysctl(pn->net, desc->sysctl_path,
						table, desc->n_knobs);
	if (!pn->sysctl) {
		kfree(table);
		return -ENOMEM;
	}
	return 0;
}

static void airtcp_sysctl_unregister(struct airtcp_pernet *pn)
{
	const struct ctl_table *table = pn->sysctl->ctl_table_arg;

	unregister_net_sysctl_table(pn->sysctl);
	kfree(table);
}

/* ------------------------------------------------ /proc/net/stat/<name> */

static const struct airtcp_pernet_desc *airtcp_stat_desc(struct seq_file *seq)
{
	return pde_data(file_inode(seq->file));
}

static struct airtcp_pernet *airtcp_stat_pernet(struct seq_file *seq)
{
	return airtcp_pernet(seq_file_net(seq), *airtcp_stat_desc(seq)->net_id);
}

static void *airtcp_stat_cpu_next(struct seq_file *seq, loff_t *pos)
{
	int cpu;

	for (cpu = *pos - 1; cpu < nr_cpu_ids; cpu++) {
		if (!cpu_possible(cpu))
			continue;
		*pos = cpu + 1;
		return per_cpu_ptr(airtcp_stat_pernet(seq)->stats, cpu);
	}
	(*pos)++;
	return NULL;
}

static void *airtcp_stat_start(struct seq_file *seq, loff_t *pos)
{
	if (*pos == 0)
		return SEQ_START_TOKEN;
	return airtcp_stat_cpu_next(seq, pos);
}

static void *airtcp_stat_next(struct seq_file *seq, void *v, loff_t *pos)
{
	(*pos)++;
	return airtcp_stat_cpu_next(seq, pos);
}

static void airtcp_stat_stop(struct seq_file *seq, void *v)
{
}

static int airtcp_stat_show(struct seq_file *seq, void *v)
{
	const struct airtcp_pernet_desc *desc = airtcp_stat_desc(seq);
	const u64 *count = v;
	unsigned int i;

	if (v == SEQ_START_TOKEN) {
		if (desc->gauge_name)
			seq_printf(seq, "%s ", desc->gauge_name);
		for (i = 0; i < desc->n_stats; i++)
			seq_printf(seq, i ? " %s" : "%s", desc->stat_names[i]);
		seq_putc(seq, '\n');
		return 0;
	}
	if (desc->gauge)
		seq_printf(seq, "%08x ", desc->gauge(airtcp_stat_pernet(seq)));
	for (i = 0; i < desc->n_stats; i++)
		seq_printf(seq, i ? " %08llx" : "%08llx", READ_ONCE(count[i]));
	seq_putc(seq, '\n');
	return 0;
}

static const struct seq_operations airtcp_stat_seq_ops = {
	.start	= airtcp_stat_start,
	.next	= airtcp_stat_next,
	.stop	= airtcp_stat_stop,
	.show	= airtcp_stat_show,
};

/* ------------------------------------------------------- per namespace */

/*
 * Knobs at their defaults, counters, then the sysctls and the statistics
 * file; the module's own state must be ready before (a switch may be
 * written as soon as the sysctls exist).  Nothing is left on failure.
 */
int airtcp_pernet_init(struct airtcp_pernet *pn, struct net *net,
		       const struct airtcp_pernet_desc *desc)
{
	unsigned int i;
	int ret;

	pn->net = net;
	pn->desc = desc;
	mutex_init(&pn->mutex);
	for (i = 0; i < desc->n_knobs; i++)
		*(int *)((char *)pn + desc->knobs[i].offset) = desc->knobs[i].def;

	pn->stats = __alloc_percpu_gfp(desc->n_stats * sizeof(u64),
				       __alignof__(u64), GFP_KERNEL_ACCOUNT);
	if (!pn->stats)
		return -ENOMEM;
	ret = airtcp_sysctl_register(pn);
	if (ret)
		goto err_sysctl;
	if (!proc_create_net_data(desc->name, 0444, net->proc_net_stat,
				  &airtcp_stat_seq_ops,
				  sizeof(struct seq_net_private), (void *)desc)) {
		ret = -ENOMEM;
		goto err_proc;
	}
	return 0;

err_proc:
	airtcp_sysctl_unregister(pn);
err_sysctl:
	free_percpu(pn->stats);
	return ret;
}

/* First, for every namespace of a batch: no hook may run any more. */
void airtcp_pernet_pre_exit(struct airtcp_pernet *pn)
{
	const struct airtcp_pernet_desc *desc = pn->desc;
	unsigned int i;

	mutex_lock(&pn->mutex);
	pn->exiting = true;
	for (i = 0; i < desc->n_knobs; i++) {
		const struct airtcp_switch *sw = desc->knobs[i].sw;

		if (sw && __test_and_clear_bit(sw->bit, &pn->hooked))
			nf_unregister_net_hooks(pn->net, sw->ops, sw->n_ops);
	}
	mutex_unlock(&pn->mutex);
}

/* Last: the statistics file, the sysctls, the counters. */
void airtcp_pernet_exit(struct airtcp_pernet *pn)
{
	remove_proc_entry(pn->desc->name, pn->net->proc_net_stat);
	airtcp_sysctl_unregister(pn);
	free_percpu(pn->stats);
}
