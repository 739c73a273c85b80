// SPDX-License-Identifier: GPL-2.0-only
/* The egress queues' drop counters: parsing RTM_NEWQDISC, which qdisc counts, rises. */
#include <libmnl/libmnl.h>
#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <string.h>

#include "check.h"
#include "egress.h"

enum stats_form { STATS2, STATS_LEGACY, STATS_NONE, STATS2_SHORT };

/* An RTM_NEWQDISC message as the kernel dumps it, into buf. */
static struct nlmsghdr *qdisc_msg(uint8_t *buf, uint16_t type, int ifindex, uint32_t handle, uint32_t parent,
				  const char *kind, uint32_t drops, enum stats_form form)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tcm;

	nlh->nlmsg_type = type;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_ifindex = ifindex;
	tcm->tcm_handle = handle;
	tcm->tcm_parent = parent;
	if (kind)
		mnl_attr_put_strz(nlh, TCA_KIND, kind);
	if (form == STATS2 || form == STATS2_SHORT) {
		struct gnet_stats_queue q = { .drops = drops };
		struct nlattr *nest = mnl_attr_nest_start(nlh, TCA_STATS2);

		mnl_attr_put(nlh, TCA_STATS_QUEUE, form == STATS2 ? sizeof(q) : 8, &q);
		mnl_attr_nest_end(nlh, nest);
	} else if (form == STATS_LEGACY) {
		struct tc_stats s = { .drops = drops };

		mnl_attr_put(nlh, TCA_STATS, sizeof(s), &s);
	}
	return nlh;
}

static void parsing(void)
{
	static const struct {
		const char *name;
		uint16_t type;
		const char *kind;
		enum stats_form form;
		enum egress_parse expect;
		const char *expect_kind;
		uint64_t expect_drops;
	} cases[] = {
		{ "fq_codel with gnet stats", RTM_NEWQDISC, "fq_codel", STATS2, EGRESS_QDISC, "fq_codel", 608 },
		{ "an old kernel's tc_stats", RTM_NEWQDISC, "pfifo", STATS_LEGACY, EGRESS_QDISC, "pfifo", 608 },
		{ "no statistics", RTM_NEWQDISC, "noqueue", STATS_NONE, EGRESS_OTHER, NULL, 0 },
		{ "not a qdisc", RTM_NEWLINK, "fq_codel", STATS2, EGRESS_OTHER, NULL, 0 },
		{ "no kind", RTM_NEWQDISC, NULL, STATS2, EGRESS_MALFORMED, NULL, 0 },
		{ "queue stats cut short", RTM_NEWQDISC, "fq_codel", STATS2_SHORT, EGRESS_MALFORMED, NULL, 0 },
		{ "a kind longer than ours", RTM_NEWQDISC, "a_very_long_qdisc_kind", STATS2, EGRESS_QDISC,
		  "a_very_long_qdi", 608 },
	};
	uint8_t buf[1024];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nlmsghdr *nlh = qdisc_msg(buf, cases[i].type, 3, 0x10000, TC_H_ROOT, cases[i].kind, 608,
						 cases[i].form);
		struct egress_qdisc q;
		enum egress_parse got = egress_parse_qdisc(nlh, nlh->nlmsg_len, &q);

		CHECK(got == cases[i].expect, "%s: parsed as %d, expected %d", cases[i].name, got, cases[i].expect);
		if (got != EGRESS_QDISC || cases[i].expect != EGRESS_QDISC)
			continue;
		CHECK(q.ifindex == 3 && q.handle == 0x10000 && q.parent == TC_H_ROOT, "%s: identity", cases[i].name);
		CHECK(!strcmp(q.kind, cases[i].expect_kind), "%s: kind %s", cases[i].name, q.kind);
		CHECK(q.drops == cases[i].expect_drops, "%s: drops %llu", cases[i].name, (unsigned long long)q.drops);
	}

	/* a message longer than what was received, or shorter than its header */
	struct nlmsghdr *nlh = qdisc_msg(buf, RTM_NEWQDISC, 3, 0x10000, TC_H_ROOT, "fq_codel", 1, STATS2);
	struct egress_qdisc q;

	CHECK(egress_parse_qdisc(nlh, nlh->nlmsg_len - 4, &q) == EGRESS_MALFORMED, "cut short");
	CHECK(egress_parse_qdisc(nlh, 8, &q) == EGRESS_MALFORMED, "shorter than a header");
	nlh->nlmsg_len = sizeof(*nlh) + 4;	/* a tcmsg cut short */
	CHECK(egress_parse_qdisc(nlh, nlh->nlmsg_len, &q) == EGRESS_MALFORMED, "tcmsg cut short");
}

#define Q(ifi, h, p, k, d) { .ifindex = (ifi), .handle = (h), .parent = (p), .kind = k, .drops = (d) }

static void which_counter(void)
{
	/* the testbed's wireless hop: netem (the channel) feeding htb feeding fq_codel */
	static const struct egress_qdisc testbed[] = {
		Q(1, 0, TC_H_ROOT, "noqueue", 0),
		Q(3, 0x10000, TC_H_ROOT, "netem", 711),
		Q(3, 0x20000, 0x10001, "htb", 608),
		Q(3, 0x30000, 0x20001, "fq_codel", 608),
		Q(4, 0x10000, TC_H_ROOT, "pfifo", 9),
	};
	/* an access point: mq with one fq_codel per hardware queue, all handle 0 */
	static const struct egress_qdisc ap[] = {
		Q(5, 0, TC_H_ROOT, "mq", 12),
		Q(5, 0, 0x1, "fq_codel", 7),
		Q(5, 0, 0x2, "fq_codel", 5),
		Q(5, 0xffff0000, TC_H_INGRESS, "ingress", 0),
	};
	static const struct egress_qdisc netem_only[] = {
		Q(3, 0x80010000, TC_H_ROOT, "netem", 50),
	};
	static const struct egress_qdisc netem_in_netem[] = {
		Q(3, 0x10000, TC_H_ROOT, "netem", 50),
		Q(3, 0x20000, 0x10001, "netem", 40),
		Q(3, 0x30000, 0x20001, "pfifo", 3),
	};
	static const struct {
		const char *name;
		const struct egress_qdisc *qs;
		size_t n;
		int ifindex;
		bool expect;
		uint64_t expect_drops;
	} cases[] = {
		{ "below the channel's netem", testbed, 5, 3, true, 608 },
		{ "a plain root qdisc", testbed, 5, 4, true, 9 },
		{ "noqueue counts nothing", testbed, 5, 1, true, 0 },
		{ "no qdisc on the interface", testbed, 5, 7, false, 0 },
		{ "mq sums its queues", ap, 4, 5, true, 12 },
		{ "netem alone is the channel", netem_only, 1, 3, false, 0 },
		{ "netem below netem", netem_in_netem, 3, 3, true, 3 },
		{ "an empty dump", testbed, 0, 3, false, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t drops = 0;
		bool got = egress_queue_drops(cases[i].qs, cases[i].n, cases[i].ifindex, &drops);

		CHECK(got == cases[i].expect, "%s: %d", cases[i].name, got);
		CHECK(!got || drops == cases[i].expect_drops, "%s: %llu drops", cases[i].name,
		      (unsigned long long)drops);
	}
}

static void rises(void)
{
	static const struct {
		uint64_t total, now;
		uint64_t expect_rise_ns, expect_rises;
	} readings[] = {
		{ 100, 10, 0, 0 },	/* the first reading is a baseline */
		{ 100, 20, 0, 0 },
		{ 104, 30, 30, 1 },
		{ 104, 40, 30, 1 },
		{ 2, 50, 30, 1 },	/* the qdisc was replaced: its counter starts again */
		{ 3, 60, 60, 2 },
	};
	struct egress_drops e = { 0 };
	size_t i;

	for (i = 0; i < sizeof(readings) / sizeof(readings[0]); i++) {
		egress_note_total(&e, readings[i].total, readings[i].now);
		CHECK(e.rise_ns == readings[i].expect_rise_ns && e.rises == readings[i].expect_rises,
		      "reading %zu: rise at %llu, %llu rises", i, (unsigned long long)e.rise_ns,
		      (unsigned long long)e.rises);
	}
}

int main(void)
{
	parsing();
	which_counter();
	rises();
	return tc_report("test_egress");
}
