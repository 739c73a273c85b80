// SPDX-License-Identifier: GPL-2.0-only
/*
 * airtcp_bugs: commits one deliberate bug of each kind the debug kernel's
 * detectors catch, on demand, so that the stress suite can prove both the
 * detectors and its log checker work (tests/stress/test_detectors.py).
 *
 *   echo use-after-free > /sys/kernel/debug/airtcp_bugs/trigger
 *
 * NEVER load this module anywhere but the debug kernel in the test VM.
 * Each bug is contained: the kernel survives it (the freed hrtimer is
 * cancelled by debugobjects' fixup, KASAN stops the double free, the
 * out-of-bounds and after-free accesses are reads).
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/uaccess.h>

static struct dentry *bugs_dir;
static DEFINE_MUTEX(bugs_lock_a);
static DEFINE_MUTEX(bugs_lock_b);
static DEFINE_SPINLOCK(bugs_spinlock);
static int __rcu *bugs_rcu_ptr;
static int bugs_rcu_value;
static unsigned int bugs_hung_ms = 5000;
module_param_named(hung_ms, bugs_hung_ms, uint, 0644);
MODULE_PARM_DESC(hung_ms, "how long the hung trigger blocks its writer (ms)");

static noinline void bugs_leak(void)
{
	char *p = kmalloc(128, GFP_KERNEL);

	if (p)
		strscpy(p, "airtcp_bugs: leaked on purpose", 128);
	OPTIMIZER_HIDE_VAR(p);	/* and forgotten */
}

static noinline void bugs_use_after_free(void)
{
	char *p = kmalloc(64, GFP_KERNEL);

	if (!p)
		return;
	kfree(p);
	OPTIMIZER_HIDE_VAR(p);
	pr_info("airtcp_bugs: read after free: %d\n", READ_ONCE(p[8]));
}

static noinline void bugs_double_free(void)
{
	char *p = kmalloc(64, GFP_KERNEL);

	kfree(p);
	OPTIMIZER_HIDE_VAR(p);
	kfree(p);
}

static noinline void bugs_out_of_bounds(void)
{
	size_t size = 60;
	char *p;

	OPTIMIZER_HIDE_VAR(size);
	p = kmalloc(size, GFP_KERNEL);
	if (!p)
		return;
	pr_info("airtcp_bugs: read past the end: %d\n", READ_ONCE(p[size + 4]));
	kfree(p);
}

struct bugs_timers {
	struct hrtimer hrtimer;
	struct timer_list timer;
};

static enum hrtimer_restart bugs_hrtimer_fn(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

static void bugs_timer_fn(struct timer_list *t)
{
}

/* Freed while armed: debugobjects reports, then its fixup cancels. */
static noinline void bugs_free_active_hrtimer(void)
{
	struct bugs_timers *t = kzalloc(sizeof(*t), GFP_KERNEL);

	if (!t)
		return;
	hrtimer_init(&t->hrtimer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	t->hrtimer.function = bugs_hrtimer_fn;
	hrtimer_start(&t->hrtimer, ms_to_ktime(10000), HRTIMER_MODE_REL);
	kfree(t);
}

static noinline void bugs_free_active_timer(void)
{
	struct bugs_timers *t = kzalloc(sizeof(*t), GFP_KERNEL);

	if (!t)
		return;
	timer_setup(&t->timer, bugs_timer_fn, 0);
	mod_timer(&t->timer, jiffies + 10 * HZ);
	kfree(t);
}

/* A then B, later B then A: lockdep sees the cycle without a deadlock. */
static noinline void bugs_lock_circular(void)
{
	mutex_lock(&bugs_lock_a);
	mutex_lock(&bugs_lock_b);
	mutex_unlock(&bugs_lock_b);
	mutex_unlock(&bugs_lock_a);

	mutex_lock(&bugs_lock_b);
	mutex_lock(&bugs_lock_a);
	mutex_unlock(&bugs_lock_a);
	mutex_unlock(&bugs_lock_b);
}

/* Taken with softirqs on here, and in a timer (softirq) below. */
static DECLARE_COMPLETION(bugs_softirq_done);

static void bugs_softirq_fn(struct timer_list *t)
{
	spin_lock(&bugs_spinlock);
	spin_unlock(&bugs_spinlock);
	complete(&bugs_softirq_done);
}

static noinline void bugs_lock_inconsistent(void)
{
	struct timer_list timer;

	spin_lock(&bugs_spinlock);
	spin_unlock(&bugs_spinlock);
	reinit_completion(&bugs_softirq_done);
	timer_setup_on_stack(&timer, bugs_softirq_fn, 0);
	mod_timer(&timer, jiffies + 1);
	wait_for_completion(&bugs_softirq_done);
	del_timer_sync(&timer);
	destroy_timer_on_stack(&timer);
}

/* rcu_dereference() outside any RCU read-side section. */
static noinline void bugs_rcu(void)
{
	int *p;

	rcu_assign_pointer(bugs_rcu_ptr, &bugs_rcu_value);
	p = rcu_dereference(bugs_rcu_ptr);
	pr_info("airtcp_bugs: unprotected RCU read: %d\n", *p);
}

static noinline void bugs_sleep_in_atomic(void)
{
	spin_lock(&bugs_spinlock);
	might_sleep();	/* reports without sleeping: no real damage */
	spin_unlock(&bugs_spinlock);
}

static noinline void bugs_warn(void)
{
	WARN(1, "airtcp_bugs: a deliberate warning\n");
}

/* Past the array but inside the struct: UBSAN's finding, not KASAN's. */
static noinline void bugs_ubsan(void)
{
	struct {
		int table[4];
		int after;
	} s = { { 1, 2, 3, 4 }, 5 };
	int index = 4;

	OPTIMIZER_HIDE_VAR(index);
	pr_info("airtcp_bugs: index past the array: %d\n", s.table[index]);
}

/* Blocks its writer uninterruptibly (state D): the hung-task watchdog. */
static noinline void bugs_hung(void)
{
	msleep(bugs_hung_ms);
}

static const struct {
	const char *name;
	void (*commit)(void);
} bugs[] = {
	{ "leak", bugs_leak },
	{ "use-after-free", bugs_use_after_free },
	{ "double-free", bugs_double_free },
	{ "out-of-bounds", bugs_out_of_bounds },
	{ "free-active-hrtimer", bugs_free_active_hrtimer },
	{ "free-active-timer", bugs_free_active_timer },
	{ "lock-circular", bugs_lock_circular },
	{ "lock-inconsistent", bugs_lock_inconsistent },
	{ "rcu", bugs_rcu },
	{ "sleep-in-atomic", bugs_sleep_in_atomic },
	{ "warn", bugs_warn },
	{ "ubsan", bugs_ubsan },
	{ "hung", bugs_hung },
};

static ssize_t bugs_trigger_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	char name[32];
	size_t i, len = min(count, sizeof(name) - 1);

	if (copy_from_user(name, ubuf, len))
		return -EFAULT;
	name[len] = '\0';
	strim(name);
	for (i = 0; i < ARRAY_SIZE(bugs); i++) {
		if (!strcmp(name, bugs[i].name)) {
			pr_info("airtcp_bugs: committing %s\n", name);
			bugs[i].commit();
			return count;
		}
	}
	pr_info("airtcp_bugs: no bug named '%s'\n", name);
	return -EINVAL;
}

static const struct file_operations bugs_trigger_fops = {
	.owner	= THIS_MODULE,
	.write	= bugs_trigger_write,
	.llseek	= noop_llseek,
};

static int __init bugs_init(void)
{
	bugs_dir = debugfs_create_dir("airtcp_bugs", NULL);
	debugfs_create_file("trigger", 0200, bugs_dir, NULL, &bugs_trigger_fops);
	return 0;
}

static void __exit bugs_exit(void)
{
	debugfs_remove(bugs_dir);
}

module_init(bugs_init);
module_exit(bugs_exit);
MODULE_DESCRIPTION("airtcp: deliberate bugs for the debug kernel's detectors");
MODULE_LICENSE("GPL");
