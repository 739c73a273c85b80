// SPDX-License-Identifier: GPL-2.0-only
/*
 * Routes: one table (table) holding a route per prefix via the TUN device
 * and one rule per address family (rule_priority) pointing lookups at it,
 * so the main table is never edited.  On exit the rules are deleted and the
 * device closed, which removes its routes; a killed arqd leaves at most a
 * rule pointing at an empty table, which the next start replaces.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>

#include "routes.h"

static int rtnl_request(struct nlmsghdr *nlh, char *err, size_t errlen, const char *what)
{
	char buf[8192];	/* acks of route and rule requests are small */
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	uint32_t portid;
	int ret = -1;
	ssize_t n;

	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "%s: rtnetlink: %s (needs CAP_NET_ADMIN)", what, strerror(errno));
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	nlh->nlmsg_seq = 1;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		snprintf(err, errlen, "%s: %s", what, strerror(errno));
		goto out;
	}
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (n < 0 || mnl_cb_run(buf, (size_t)n, 1, portid, NULL, NULL) < 0) {
		snprintf(err, errlen, "%s: %s", what, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (nl)
		mnl_socket_close(nl);
	return ret;
}

static int add_route(const struct arq_config *cfg, int tun_ifindex, const struct arq_prefix *p, char *err,
		     size_t errlen)
{
	char buf[512], addr[INET6_ADDRSTRLEN], what[128];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;

	nlh->nlmsg_type = RTM_NEWROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (uint8_t)p->family;
	rtm->rtm_dst_len = p->len;
	rtm->rtm_table = RT_TABLE_UNSPEC;
	rtm->rtm_protocol = RTPROT_STATIC;
	rtm->rtm_scope = RT_SCOPE_LINK;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put(nlh, RTA_DST, p->family == AF_INET ? 4 : 16, p->addr);
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)tun_ifindex);
	mnl_attr_put_u32(nlh, RTA_TABLE, cfg->table);
	inet_ntop(p->family, p->addr, addr, sizeof(addr));
	snprintf(what, sizeof(what), "routes = %s: route %s/%u dev %s table %u", cfg->routes, addr, p->len,
		 cfg->tun, cfg->table);
	return rtnl_request(nlh, err, errlen, what);
}

static int rule(const struct arq_config *cfg, int family, bool add, char *err, size_t errlen)
{
	char buf[256], what[128];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct fib_rule_hdr *frh;

	nlh->nlmsg_type = add ? RTM_NEWRULE : RTM_DELRULE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (add ? NLM_F_CREATE | NLM_F_EXCL : 0);
	frh = mnl_nlmsg_put_extra_header(nlh, sizeof(*frh));
	frh->family = (uint8_t)family;
	frh->action = FR_ACT_TO_TBL;
	frh->table = RT_TABLE_UNSPEC;
	mnl_attr_put_u32(nlh, FRA_TABLE, cfg->table);
	mnl_attr_put_u32(nlh, FRA_PRIORITY, cfg->rule_priority);
	snprintf(what, sizeof(what), "rule_priority = %u: %s rule to table %u (%s)", cfg->rule_priority,
		 add ? "adding the" : "deleting the", cfg->table, family == AF_INET ? "IPv4" : "IPv6");
	return rtnl_request(nlh, err, errlen, what);
}

int routes_install(struct arq_routes *r, const struct arq_config *cfg, int tun_ifindex, char *err, size_t errlen)
{
	static const int families[2] = { AF_INET, AF_INET6 };
	char ignored[256];
	uint32_t i;
	int f;

	for (i = 0; i < cfg->nprefix; i++)
		if (add_route(cfg, tun_ifindex, &cfg->prefix[i], err, errlen) < 0)
			return -1;
	for (f = 0; f < 2; f++) {
		bool used = false;

		for (i = 0; i < cfg->nprefix; i++)
			used |= cfg->prefix[i].family == families[f];
		if (!used)
			continue;
		/* a rule a killed arqd left: the same rule, so replace it */
		while (rule(cfg, families[f], false, ignored, sizeof(ignored)) == 0)
			;
		if (rule(cfg, families[f], true, err, errlen) < 0)
			return -1;
		r->rule_installed[f] = true;
	}
	return 0;
}

void routes_remove(struct arq_routes *r, const struct arq_config *cfg)
{
	static const int families[2] = { AF_INET, AF_INET6 };
	char err[256];
	int f;

	for (f = 0; f < 2; f++) {
		if (r->rule_installed[f] && rule(cfg, families[f], false, err, sizeof(err)) < 0)
			fprintf(stderr, "arqd: %s\n", err);
		r->rule_installed[f] = false;
	}
}
