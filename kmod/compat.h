/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel-version shims for tcp_ddack, all in one place.  The module is
 * written against 6.1 (Debian bookworm, the testbed's VM kernel); every
 * LINUX_VERSION_CODE test lives here and nowhere else.
 */
#ifndef _DDACK_COMPAT_H
#define _DDACK_COMPAT_H

#include <linux/version.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 10, 0)
#error "tcp_ddack needs Linux 5.10 or later (pernet pre_exit, proc_create_net)"
#endif

#include <linux/hrtimer.h>

/* hrtimer_setup() replaced hrtimer_init() + .function in 6.13. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define ddack_hrtimer_setup(timer, fn, clock, mode) \
	hrtimer_setup(timer, fn, clock, mode)
#else
static inline void ddack_hrtimer_setup(struct hrtimer *timer,
				       enum hrtimer_restart (*fn)(struct hrtimer *),
				       clockid_t clock, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
}
#endif

/* register_net_sysctl() became a size-taking macro in 6.6. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#define ddack_register_net_sysctl(net, path, table, n) \
	register_net_sysctl_sz(net, path, table, n)
#else
#define ddack_register_net_sysctl(net, path, table, n) \
	register_net_sysctl(net, path, table)
#endif

#endif /* _DDACK_COMPAT_H */
