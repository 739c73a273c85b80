// SPDX-License-Identifier: GPL-2.0-only
/* Reading the egress queues' drop counters over rtnetlink (egress_io.h). */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "egress_io.h"

/* A dump of a few devices' qdiscs fits in a few of these; a bound keeps a poll short. */
#define EGRESS_MAX_READS 16
/* the largest part of a dump the kernel sends (netlink_dump(): up to 32 KiB) */
#define EGRESS_DUMP_BUF 32768

int egress_open(struct egress_watch *w, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!w->nl || mnl_socket_bind(w->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "egress_drops: rtnetlink socket: %s", strerror(errno));
		egress_close(w);
		return -1;
	}
	return 0;
}

void egress_close(struct egress_watch *w)
{
	if (w->nl)
		mnl_socket_close(w->nl);
	w->nl = NULL;
}

/* Whatever an abandoned dump left in the socket. */
static void drain(struct egress_watch *w, uint8_t *buf, size_t size)
{
	for (int i = 0; i < EGRESS_MAX_READS; i++)
		if (mnl_socket_recvfrom(w->nl, buf, size) <= 0)
			return;
}

/* One dump into w->seen; the number of qdiscs, or -1. */
static int dump(struct egress_watch *w, size_t *count)
{
	uint8_t buf[EGRESS_DUMP_BUF];
	struct nlmsghdr *nlh;
	struct tcmsg *tcm;

	drain(w, buf, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETQDISC;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++w->seq;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	if (mnl_socket_sendto(w->nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	*count = 0;
	for (int reads = 0; reads < EGRESS_MAX_READS; reads++) {
		ssize_t len = mnl_socket_recvfrom(w->nl, buf, sizeof(buf));
		int left;

		if (len <= 0)
			return -1;	/* EAGAIN included: the kernel builds each part in the call */
		left = (int)len;
		for (nlh = (struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
			struct egress_qdisc q;

			if (nlh->nlmsg_seq != w->seq)
				continue;
			if (nlh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nlh->nlmsg_type == NLMSG_ERROR)
				return -1;
			if (egress_parse_qdisc(nlh, (size_t)nlh->nlmsg_len, &q) != EGRESS_QDISC)
				continue;
			if (*count < EGRESS_MAX_QDISCS)
				w->seen[(*count)++] = q;
			else
				w->skipped++;
		}
	}
	return -1;
}

void egress_poll(struct egress_watch *w, const uint32_t *ifindexes, uint32_t n, uint64_t now)
{
	uint64_t total = 0, drops;
	size_t count;

	if (!w->nl || (w->polled_ns && now - w->polled_ns < EGRESS_POLL_NS))
		return;
	w->polled_ns = now;
	if (dump(w, &count) < 0) {
		w->errors++;
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		if (ifindexes[i] && egress_queue_drops(w->seen, count, (int)ifindexes[i], &drops))
			total += drops;
	egress_note_total(&w->drops, total, now);
}
