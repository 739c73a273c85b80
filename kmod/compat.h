/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel-version shims for the airtcp modules, all in one place; every
 * LINUX_VERSION_CODE test lives here and nowhere else.
 *
 * Built and tested: Debian's 6.1 (6.1.0-56-amd64, 6.1.192: the testbed's
 * VM kernel, and the debug kernel made from the same source) and 6.12
 * (6.12.117+deb12-amd64), both without a warning, checkpatch --strict and
 * sparse clean, and the modules' integration tests run in the VM on each
 * (Documentation/deploy.rst, "Kernels").  The
 * shims below also cover the API changes up to 6.13 (hrtimer_setup()),
 * which is compiled by no test here; 5.10 is the oldest the code could
 * build on, untested.
 */
#ifndef _AIRTCP_COMPAT_H
#define _AIRTCP_COMPAT_H

#include <linux/version.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 10, 0)
#error "the airtcp modules need Linux 5.10 or later (pernet pre_exit, proc_create_net)"
#endif

#include <linux/hrtimer.h>
#include <linux/sysctl.h>
#include <net/net_namespace.h>

/* hrtimer_setup() replaced hrtimer_init() + .function in 6.13. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define airtcp_hrtimer_setup(timer, fn, clock, mode) \
	hrtimer_setup(timer, fn, clock, mode)
#else
static inline void airtcp_hrtimer_setup(struct hrtimer *timer,
					enum hrtimer_restart (*fn)(struct hrtimer *),
					clockid_t clock, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
}
#endif

/* register_net_sysctl() became a size-taking macro in 6.6. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#define airtcp_register_net_sysctl(net, path, table, n) \
	register_net_sysctl_sz(net, path, table, n)
#else
static inline struct ctl_table_header *
airtcp_register_net_sysctl(struct net *net, const char *path,
			   struct ctl_table *table, size_t n)
{
	return register_net_sysctl(net, path, table);
}
#endif

/*
 * A proc_handler's table: const since 6.11.  Our handlers never write
 * through it, so they are declared with this and fit both.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define AIRTCP_CTL_TABLE const struct ctl_table
#else
#define AIRTCP_CTL_TABLE struct ctl_table
#endif

#endif /* _AIRTCP_COMPAT_H */
