/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-network-namespace plumbing shared by the airtcp modules (tcp_ddack,
 * tcp_snack), so that each of them only says what it has:
 *
 *  - knobs under net.<module>.*: one int each in the module's per-netns
 *    struct, described once in <module>_knobs.h (default, range, unit,
 *    meaning) and made into a sysctl table per namespace;
 *  - switches: knobs whose 1 registers a part's netfilter hooks in this
 *    namespace and whose 0 unregisters them, refused once the namespace
 *    is exiting, undone for every namespace at pre_exit;
 *  - counters: per CPU, shown in /proc/net/stat/<module> in the lnstat
 *    format (a header line, one hex row per CPU, an optional gauge first).
 *
 * A module puts a struct airtcp_pernet first in its per-netns struct and
 * calls airtcp_pernet_init(), _pre_exit() and _exit() from its
 * pernet_operations.  The code is in airtcp_pernet.c, compiled into each
 * module (through <module>_shared.c): no symbol crosses modules, so
 * insmod needs no order.
 */
#ifndef _AIRTCP_PERNET_H
#define _AIRTCP_PERNET_H

#include <linux/mutex.h>
#include <linux/netfilter.h>
#include <linux/percpu.h>
#include <linux/stddef.h>
#include <linux/sysctl.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "compat.h"

struct airtcp_pernet_desc;

struct airtcp_pernet {
	struct net *net;
	const struct airtcp_pernet_desc *desc;
	struct mutex mutex;		/* switches, exiting; modules' own knobs */
	unsigned long hooked;		/* bit n: switch n's hooks are in */
	bool exiting;			/* pre_exit ran: never hook again */
	struct ctl_table_header *sysctl;
	u64 __percpu *stats;		/* desc->n_stats counters per CPU */
};

/* What one switch knob turns on and off, under the mutex. */
struct airtcp_switch {
	unsigned int bit;		/* its bit of pn->hooked */
	const struct nf_hook_ops *ops;	/* registered while it is on */
	unsigned int n_ops;
	/* Optional: once a write of 0 has unhooked (not at exit). */
	void (*drain)(struct net *net);
};

/* One line of a <module>_knobs.h list, as the module keeps it. */
struct airtcp_knob {
	const char *name;
	size_t offset;			/* of its int in the per-netns struct */
	proc_handler *handler;
	const struct airtcp_switch *sw;	/* set for switches */
	umode_t mode;
	int def;
	int min;
	int max;
	int userns_max;			/* limits: above, capable() only */
};

/*
 * A <module>_knobs.h list has one line per knob, with no include guard:
 *
 *   AIRTCP_SWITCH(name, switch, meaning)
 *   AIRTCP_KNOB(name, handler, default, min, max, unit, meaning)
 *   AIRTCP_LIMIT(name, default, min, max, userns_max, unit, meaning)
 *   AIRTCP_STATUS(name, handler, unit, meaning)       read-only
 *
 * A limit bounds what the module may allocate or keep for the namespace.
 * The namespace's owner writes it up to userns_max; above that only a
 * writer with CAP_NET_ADMIN in the initial user namespace may
 * (airtcp_sysctl_limit(): EPERM), since the root of a user namespace is
 * any local user, and the module's data-path memory is not charged to
 * anyone's memory cgroup (it is allocated in softirq context, where the
 * kernel has no task to charge).
 *
 * unit is a unit of measure, or for a choice the names of the values
 * 0, 1, ... separated by "|".  airtcp_knobs.h makes the list into an
 * array of struct airtcp_knob; tests/knobs_dump.c makes it into
 * kmod/knobs.json, against which the testbed's plugins and the
 * documentation's knob tables are checked.
 */
#define AIRTCP_KNOB_ENTRY(owner, field, fn, d, lo, hi) {		\
	.name		= #field,					\
	.offset		= offsetof(owner, cfg.field),			\
	.handler	= fn,						\
	.mode		= 0644,						\
	.def		= d,						\
	.min		= lo,						\
	.max		= hi,						\
}

#define AIRTCP_LIMIT_ENTRY(owner, field, d, lo, hi, uhi) {		\
	.name		= #field,					\
	.offset		= offsetof(owner, cfg.field),			\
	.handler	= airtcp_sysctl_limit,				\
	.mode		= 0644,						\
	.def		= d,						\
	.min		= lo,						\
	.max		= hi,						\
	.userns_max	= uhi,						\
}

#define AIRTCP_SWITCH_ENTRY(owner, field, s) {				\
	.name		= #field,					\
	.offset		= offsetof(owner, cfg.field),			\
	.handler	= airtcp_sysctl_switch,				\
	.sw		= &(s),						\
	.mode		= 0644,						\
	.max		= 1,						\
}

#define AIRTCP_STATUS_ENTRY(owner, field, fn) {				\
	.name		= #field,					\
	.offset		= offsetof(owner, cfg.field),			\
	.handler	= fn,						\
	.mode		= 0444,						\
}

/* What a module registers per namespace. */
struct airtcp_pernet_desc {
	const char *name;		/* /proc/net/stat/<name> */
	const char *sysctl_path;	/* "net/<name>" */
	unsigned int *net_id;		/* pernet_operations.id */
	const struct airtcp_knob *knobs;
	unsigned int n_knobs;
	const char *const *stat_names;
	unsigned int n_stats;
	const char *gauge_name;		/* optional: a level, not a count */
	unsigned int (*gauge)(struct airtcp_pernet *pn);
};

static inline struct airtcp_pernet *airtcp_pernet(const struct net *net,
						  unsigned int net_id)
{
	return net_generic(net, net_id);
}

static inline void airtcp_stat_add(struct airtcp_pernet *pn, unsigned int i,
				   u64 n)
{
	this_cpu_add(pn->stats[i], n);
}

static inline void airtcp_stat_inc(struct airtcp_pernet *pn, unsigned int i)
{
	airtcp_stat_add(pn, i, 1);
}

int airtcp_pernet_init(struct airtcp_pernet *pn, struct net *net,
		       const struct airtcp_pernet_desc *desc);
void airtcp_pernet_pre_exit(struct airtcp_pernet *pn);
void airtcp_pernet_exit(struct airtcp_pernet *pn);

int airtcp_sysctl_switch(AIRTCP_CTL_TABLE *table, int write, void *buffer,
			 size_t *lenp, loff_t *ppos);
int airtcp_sysctl_limit(AIRTCP_CTL_TABLE *table, int write, void *buffer,
			size_t *lenp, loff_t *ppos);

#endif /* _AIRTCP_PERNET_H */
