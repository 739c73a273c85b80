/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-network-namespace plumbing shared by the airtcp modules (tcp_ddack,
 * tcp_snack): a sysctl table made from a template whose .data fields are
 * offsets into the module's per-netns config struct, and per-CPU counters
 * shown in /proc/net/stat/<name> in the lnstat format (a header line, one
 * hex row per CPU, an optional gauge in the first column).
 *
 * Everything is static inline: each module gets its own copy, so there is
 * no inter-module dependency for insmod to resolve.
 */
#ifndef _AIRTCP_PERNET_H
#define _AIRTCP_PERNET_H

#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sysctl.h>
#include <net/net_namespace.h>

#include "compat.h"

/* ------------------------------------------------------------- sysctls */

/* The template's .data: an offset in the config struct, made per netns. */
#define AIRTCP_CFG_OFFSET(type, field) ((void *)offsetof(type, field))

/*
 * Register a copy of @tmpl (@n entries plus the empty terminator) under
 * @path with every .data rebased onto @cfg.  Returns the header or NULL.
 */
static inline struct ctl_table_header *
airtcp_sysctl_register(struct net *net, const char *path,
		       const struct ctl_table *tmpl, size_t n, void *cfg)
{
	struct ctl_table_header *hdr;
	struct ctl_table *table;
	size_t i;

	table = kmemdup(tmpl, (n + 1) * sizeof(*tmpl), GFP_KERNEL);
	if (!table)
		return NULL;
	for (i = 0; i < n; i++)
		table[i].data = (char *)cfg + (uintptr_t)table[i].data;
	hdr = ddack_register_net_sysctl(net, path, table, n);
	if (!hdr)
		kfree(table);
	return hdr;
}

static inline void airtcp_sysctl_unregister(struct ctl_table_header *hdr)
{
	const struct ctl_table *table = hdr->ctl_table_arg;

	unregister_net_sysctl_table(hdr);
	kfree(table);
}

/* ------------------------------------------------ /proc/net/stat/<name> */

/*
 * What a module's statistics file shows.  @counters returns the per-CPU
 * array of @n u64 counters of a namespace; @gauge, if set, a value shown
 * first under @gauge_name (not per CPU: the same on every row).
 */
struct airtcp_stat_desc {
	const char *const *names;
	unsigned int n;
	const char *gauge_name;
	u64 __percpu *(*counters)(const struct net *net);
	unsigned int (*gauge)(const struct net *net);
};

static inline const struct airtcp_stat_desc *airtcp_stat_of(struct seq_file *seq)
{
	return pde_data(file_inode(seq->file));
}

static inline void *airtcp_stat_cpu_next(struct seq_file *seq, loff_t *pos)
{
	const struct airtcp_stat_desc *desc = airtcp_stat_of(seq);
	int cpu;

	for (cpu = *pos - 1; cpu < nr_cpu_ids; cpu++) {
		if (!cpu_possible(cpu))
			continue;
		*pos = cpu + 1;
		return per_cpu_ptr(desc->counters(seq_file_net(seq)), cpu);
	}
	(*pos)++;
	return NULL;
}

static inline void *airtcp_stat_start(struct seq_file *seq, loff_t *pos)
{
	if (*pos == 0)
		return SEQ_START_TOKEN;
	return airtcp_stat_cpu_next(seq, pos);
}

static inline void *airtcp_stat_next(struct seq_file *seq, void *v, loff_t *pos)
{
	(*pos)++;
	return airtcp_stat_cpu_next(seq, pos);
}

static inline void airtcp_stat_stop(struct seq_file *seq, void *v)
{
}

static inline int airtcp_stat_show(struct seq_file *seq, void *v)
{
	const struct airtcp_stat_desc *desc = airtcp_stat_of(seq);
	const u64 *count = v;
	unsigned int i;

	if (v == SEQ_START_TOKEN) {
		if (desc->gauge_name)
			seq_printf(seq, "%s ", desc->gauge_name);
		for (i = 0; i < desc->n; i++)
			seq_printf(seq, i ? " %s" : "%s", desc->names[i]);
		seq_putc(seq, '\n');
		return 0;
	}
	if (desc->gauge)
		seq_printf(seq, "%08x ", desc->gauge(seq_file_net(seq)));
	for (i = 0; i < desc->n; i++)
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

static inline u64 __percpu *airtcp_stat_alloc(unsigned int n)
{
	return __alloc_percpu(n * sizeof(u64), __alignof__(u64));
}

static inline int airtcp_stat_create(struct net *net, const char *name,
				     const struct airtcp_stat_desc *desc)
{
	if (!proc_create_net_data(name, 0444, net->proc_net_stat,
				  &airtcp_stat_seq_ops,
				  sizeof(struct seq_net_private), (void *)desc))
		return -ENOMEM;
	return 0;
}

static inline void airtcp_stat_remove(struct net *net, const char *name)
{
	remove_proc_entry(name, net->proc_net_stat);
}

#endif /* _AIRTCP_PERNET_H */
