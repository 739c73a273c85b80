// SPDX-License-Identifier: GPL-2.0-only
/* The egress queues' drop counters: parsing and arithmetic (egress.h). */
#include <libmnl/libmnl.h>
#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <string.h>

#include "egress.h"

struct parsed {
	const struct nlattr *kind, *stats2, *stats;
};

static int top_attr(const struct nlattr *a, void *data)
{
	struct parsed *p = data;

	switch (mnl_attr_get_type(a)) {
	case TCA_KIND:
		p->kind = a;
		break;
	case TCA_STATS2:
		p->stats2 = a;
		break;
	case TCA_STATS:
		p->stats = a;
		break;
	}
	return MNL_CB_OK;
}

static int queue_attr(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == TCA_STATS_QUEUE)
		*(const struct nlattr **)data = a;
	return MNL_CB_OK;
}

enum egress_parse egress_parse_qdisc(const struct nlmsghdr *nlh, size_t len, struct egress_qdisc *q)
{
	const struct nlattr *queue = NULL;
	const struct tcmsg *tcm;
	struct parsed p = { 0 };
	size_t kind_len;

	if (len < sizeof(*nlh) || !mnl_nlmsg_ok(nlh, (int)len))
		return EGRESS_MALFORMED;
	if (nlh->nlmsg_type != RTM_NEWQDISC)
		return EGRESS_OTHER;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*tcm))
		return EGRESS_MALFORMED;
	tcm = mnl_nlmsg_get_payload(nlh);
	if (mnl_attr_parse(nlh, sizeof(*tcm), top_attr, &p) < 0)
		return EGRESS_MALFORMED;
	if (!p.kind || mnl_attr_validate(p.kind, MNL_TYPE_NUL_STRING) < 0)
		return EGRESS_MALFORMED;
	memset(q, 0, sizeof(*q));
	q->ifindex = tcm->tcm_ifindex;
	q->handle = tcm->tcm_handle;
	q->parent = tcm->tcm_parent;
	kind_len = strnlen(mnl_attr_get_str(p.kind), mnl_attr_get_payload_len(p.kind));
	if (kind_len >= EGRESS_KIND_LEN)
		kind_len = EGRESS_KIND_LEN - 1;
	memcpy(q->kind, mnl_attr_get_str(p.kind), kind_len);
	if (p.stats2) {
		if (mnl_attr_validate(p.stats2, MNL_TYPE_NESTED) < 0 ||
		    mnl_attr_parse_nested(p.stats2, queue_attr, &queue) < 0)
			return EGRESS_MALFORMED;
		if (queue) {
			struct gnet_stats_queue s;

			if (mnl_attr_get_payload_len(queue) < sizeof(s))
				return EGRESS_MALFORMED;
			memcpy(&s, mnl_attr_get_payload(queue), sizeof(s));
			q->drops = s.drops;
			return EGRESS_QDISC;
		}
	}
	if (p.stats) {
		struct tc_stats s;

		if (mnl_attr_get_payload_len(p.stats) < sizeof(s))
			return EGRESS_MALFORMED;
		memcpy(&s, mnl_attr_get_payload(p.stats), sizeof(s));
		q->drops = s.drops;
		return EGRESS_QDISC;
	}
	return EGRESS_OTHER;
}

static const struct egress_qdisc *child_of(const struct egress_qdisc *qs, size_t n, const struct egress_qdisc *q)
{
	for (size_t i = 0; i < n; i++)
		if (&qs[i] != q && qs[i].ifindex == q->ifindex && qs[i].parent != TC_H_ROOT &&
		    TC_H_MAJ(qs[i].parent) == TC_H_MAJ(q->handle))
			return &qs[i];
	return NULL;
}

bool egress_queue_drops(const struct egress_qdisc *qs, size_t n, int ifindex, uint64_t *drops)
{
	const struct egress_qdisc *q = NULL;
	size_t depth;

	for (size_t i = 0; i < n && !q; i++)
		if (qs[i].ifindex == ifindex && qs[i].parent == TC_H_ROOT)
			q = &qs[i];
	/* below an emulated channel (netem, nested at most n deep), the queue it feeds */
	for (depth = 0; q && !strcmp(q->kind, "netem") && depth < n; depth++)
		q = child_of(qs, n, q);
	if (!q || !strcmp(q->kind, "netem"))
		return false;
	*drops = q->drops;
	return true;
}

void egress_note_total(struct egress_drops *e, uint64_t total, uint64_t now)
{
	if (e->primed && total > e->total) {
		e->rise_ns = now;
		e->rises++;
	}
	e->total = total;
	e->primed = true;
}
