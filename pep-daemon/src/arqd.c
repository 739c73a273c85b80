// SPDX-License-Identifier: GPL-2.0-only
/*
 * arqd's I/O: everything the pure state machines (arq_tx.c, arq_rx.c) do
 * not do.  Packets the kernel routes into the TUN device become data
 * frames on the wireless interface (AF_PACKET, EtherType 0x88b5, to the
 * peer's address); data frames from the peer go up through the TUN device
 * into this host's stack; acks and status frames go straight to the state
 * machines.  So netem on the wireless interface hits data frames and
 * feedback alike, and nothing here ever looks inside an IP packet.
 *
 * Pacing (link_rate): every frame sent takes its time on a virtual link
 * of the radio's rate; data frames wait in arqd while that link is more
 * than pace_frames frames ahead of the clock, so the queue is arqd's (ordered:
 * retransmissions first) and not the qdisc's below (a FIFO).  Acks and
 * status frames are never held, only counted.
 *
 * Two packet sockets: data frames go through one whose send buffer is
 * link_queue, so that at most that much waits in the qdisc below (a full
 * buffer makes arqd wait for EPOLLOUT, and link acks and retransmissions,
 * which wait in arqd, overtake everything that is not yet below); acks and
 * status frames go through the other, at once.  The TUN device is read
 * only while the sender's window has room: otherwise packets wait in its
 * queue (tun_queue) and overflow there, as congestion.
 *
 * Routes: one table (table) holding a route per prefix via the TUN device
 * and one rule per address family (rule_priority) pointing lookups at it,
 * so the main table is never edited.  On exit the rules are deleted and the
 * device closed, which removes its routes; a killed arqd leaves at most a
 * rule pointing at an empty table, which the next start replaces.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fib_rules.h>
#include <linux/if_tun.h>
#include <linux/rtnetlink.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libmnl/libmnl.h>

#include "arqd.h"

#define ARQD_VERSION "0.1.0"
#define FRAMES_PER_ROUND 256
#define RETRY_NS 1000000ULL	/* a full qdisc: try again in 1 ms */

/* ---------------------------------------------------------------- routes */

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

static int add_route(struct arqd *d, const struct arq_prefix *p, char *err, size_t errlen)
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
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)d->tun_ifindex);
	mnl_attr_put_u32(nlh, RTA_TABLE, d->cfg.table);
	inet_ntop(p->family, p->addr, addr, sizeof(addr));
	snprintf(what, sizeof(what), "routes = %s: route %s/%u dev %s table %u", d->cfg.routes, addr, p->len,
		 d->cfg.tun, d->cfg.table);
	return rtnl_request(nlh, err, errlen, what);
}

static int rule(struct arqd *d, int family, bool add, char *err, size_t errlen)
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
	mnl_attr_put_u32(nlh, FRA_TABLE, d->cfg.table);
	mnl_attr_put_u32(nlh, FRA_PRIORITY, d->cfg.rule_priority);
	snprintf(what, sizeof(what), "rule_priority = %u: %s rule to table %u (%s)", d->cfg.rule_priority,
		 add ? "adding the" : "deleting the", d->cfg.table, family == AF_INET ? "IPv4" : "IPv6");
	return rtnl_request(nlh, err, errlen, what);
}

static int install_routes(struct arqd *d, char *err, size_t errlen)
{
	static const int families[2] = { AF_INET, AF_INET6 };
	char ignored[256];
	uint32_t i;
	int f;

	for (i = 0; i < d->cfg.nprefix; i++)
		if (add_route(d, &d->cfg.prefix[i], err, errlen) < 0)
			return -1;
	for (f = 0; f < 2; f++) {
		bool used = false;

		for (i = 0; i < d->cfg.nprefix; i++)
			used |= d->cfg.prefix[i].family == families[f];
		if (!used)
			continue;
		/* a rule a killed arqd left: the same rule, so replace it */
		while (rule(d, families[f], false, ignored, sizeof(ignored)) == 0)
			;
		if (rule(d, families[f], true, err, errlen) < 0)
			return -1;
		d->rule_installed[f] = true;
	}
	return 0;
}

static void remove_rules(struct arqd *d)
{
	static const int families[2] = { AF_INET, AF_INET6 };
	char err[256];
	int f;

	for (f = 0; f < 2; f++) {
		if (d->rule_installed[f] && rule(d, families[f], false, err, sizeof(err)) < 0)
			fprintf(stderr, "arqd: %s\n", err);
		d->rule_installed[f] = false;
	}
}

/* ---------------------------------------------------------------- devices */

static int if_ioctl(unsigned long req, struct ifreq *ifr)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -1;
	r = ioctl(fd, req, ifr);
	close(fd);
	return r;
}

static int open_tun(struct arqd *d, char *err, size_t errlen)
{
	struct ifreq ifr;

	d->tun_fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (d->tun_fd < 0) {
		snprintf(err, errlen, "tun = %s: /dev/net/tun: %s (is the tun module loaded?)", d->cfg.tun,
			 strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", d->cfg.tun);
	if (ioctl(d->tun_fd, TUNSETIFF, &ifr) < 0) {
		snprintf(err, errlen, "tun = %s: creating the device: %s", d->cfg.tun, strerror(errno));
		return -1;
	}
	d->tun_ifindex = (int)if_nametoindex(d->cfg.tun);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", d->cfg.tun);
	ifr.ifr_mtu = (int)d->tun_mtu;
	if (if_ioctl(SIOCSIFMTU, &ifr) < 0) {
		snprintf(err, errlen, "tun_mtu = %u: %s", d->tun_mtu, strerror(errno));
		return -1;
	}
	ifr.ifr_qlen = (int)d->cfg.tun_queue;
	if (if_ioctl(SIOCSIFTXQLEN, &ifr) < 0) {
		snprintf(err, errlen, "tun_queue = %u: %s", d->cfg.tun_queue, strerror(errno));
		return -1;
	}
	if (if_ioctl(SIOCGIFFLAGS, &ifr) < 0) {
		snprintf(err, errlen, "tun = %s: %s", d->cfg.tun, strerror(errno));
		return -1;
	}
	ifr.ifr_flags |= IFF_UP;
	if (if_ioctl(SIOCSIFFLAGS, &ifr) < 0) {
		snprintf(err, errlen, "tun = %s: setting it up: %s", d->cfg.tun, strerror(errno));
		return -1;
	}
	return 0;
}

static int open_link(struct arqd *d, char *err, size_t errlen)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ARQ_ETHERTYPE) };
	int rcvbuf = 4 << 20, sndbuf = (int)(d->cfg.link_queue / 2);	/* the kernel doubles it */
	struct ifreq ifr;

	d->ifindex = (int)if_nametoindex(d->cfg.link);
	if (!d->ifindex) {
		snprintf(err, errlen, "link = %s: no such interface", d->cfg.link);
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", d->cfg.link);
	d->link_ifmtu = if_ioctl(SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0 ? (uint32_t)ifr.ifr_mtu : 1500;
	if (d->link_ifmtu <= ARQ_HDR_LEN + ARQ_FRAG_HDR_LEN + 64) {
		snprintf(err, errlen, "link = %s: MTU %u is too small for link frames", d->cfg.link, d->link_ifmtu);
		return -1;
	}
	d->data_fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ARQ_ETHERTYPE));
	/* protocol 0: sends only, receives nothing */
	d->ctl_fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (d->data_fd < 0 || d->ctl_fd < 0) {
		snprintf(err, errlen, "link = %s: packet socket: %s (needs CAP_NET_RAW)", d->cfg.link, strerror(errno));
		return -1;
	}
	sll.sll_ifindex = d->ifindex;
	if (bind(d->data_fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		snprintf(err, errlen, "link = %s: bind: %s", d->cfg.link, strerror(errno));
		return -1;
	}
	if (setsockopt(d->data_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		setsockopt(d->data_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (setsockopt(d->data_fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) < 0 &&
	    setsockopt(d->data_fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) < 0) {
		snprintf(err, errlen, "link_queue = %llu: %s", (unsigned long long)d->cfg.link_queue, strerror(errno));
		return -1;
	}
	memset(&d->peer, 0, sizeof(d->peer));
	d->peer.sll_family = AF_PACKET;
	d->peer.sll_protocol = htons(ARQ_ETHERTYPE);
	d->peer.sll_ifindex = d->ifindex;
	d->peer.sll_halen = 6;
	memcpy(d->peer.sll_addr, d->cfg.peer, 6);
	return 0;
}

/* ---------------------------------------------------------------- data path */

static void deliver(void *ctx, const uint8_t *pkt, size_t len)
{
	struct arqd *d = ctx;

	if (write(d->tun_fd, pkt, len) != (ssize_t)len)
		d->cnt.tun_write_errors++;
}

/* The paced link: time a frame of n bytes occupies it. */
static uint64_t wire_ns(const struct arqd *d, size_t n)
{
	return (uint64_t)((double)(n + ARQ_ETH_HDR_LEN + d->cfg.link_overhead) * 8e9 / (double)d->cfg.link_rate);
}

static void pace_charge(struct arqd *d, size_t n, uint64_t now)
{
	if (!d->cfg.link_rate)
		return;
	if (d->pace_next_ns < now)
		d->pace_next_ns = now;
	d->pace_next_ns += wire_ns(d, n);
}

static void send_feedback(void *ctx, const struct arq_frame *f)
{
	struct arqd *d = ctx;
	size_t n = arq_frame_build(d->ctl_frame, sizeof(d->ctl_frame), f);

	if (!n || sendto(d->ctl_fd, d->ctl_frame, n, 0, (struct sockaddr *)&d->peer, sizeof(d->peer)) < 0) {
		d->cnt.control_dropped++;
		return;
	}
	/* never held: an ack only takes its share of the paced link */
	pace_charge(d, n, evloop_now_ns());
	d->cnt.control_frames_out++;
	d->cnt.overhead_bytes += n + ARQ_ETH_HDR_LEN;
	d->cnt.bytes_out += n + ARQ_ETH_HDR_LEN;
}

static void set_tun_reading(struct arqd *d, bool on)
{
	if (on == d->tun_reading)
		return;
	if (evloop_watch(&d->loop, d->tun_fd, on ? EPOLLIN : 0) == 0)
		d->tun_reading = on;
	if (!on)
		d->cnt.tun_paused++;
}

/* Put frames on the link while it takes them: retransmissions first (arq_tx_peek's order). */
static void pump(struct arqd *d)
{
	uint64_t now = evloop_now_ns();
	struct arq_frame f;

	while (!d->out_blocked && !d->retry_at && arq_tx_peek(&d->tx, &f)) {
		size_t n;

		if (d->cfg.link_rate && d->pace_next_ns > now + d->pace_burst_ns) {
			d->cnt.send_paced++;
			d->retry_at = d->pace_next_ns - d->pace_burst_ns;
			break;
		}
		n = arq_frame_build(d->frame, sizeof(d->frame), &f);

		if (sendto(d->data_fd, d->frame, n, 0, (struct sockaddr *)&d->peer, sizeof(d->peer)) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				d->cnt.send_blocked++;
				d->out_blocked = true;
				evloop_watch(&d->loop, d->data_fd, EPOLLIN | EPOLLOUT);
				break;
			}
			if (errno == ENOBUFS) {
				d->cnt.send_refused++;
				d->retry_at = now + RETRY_NS;
				break;
			}
			d->cnt.send_errors++;
		}
		arq_tx_sent(&d->tx, now);
		pace_charge(d, n, now);
		d->cnt.data_frames_out++;
		d->cnt.overhead_bytes += n - f.len + ARQ_ETH_HDR_LEN;
		d->cnt.bytes_out += n + ARQ_ETH_HDR_LEN;
	}
	set_tun_reading(d, arq_tx_room(&d->tx) >= d->frames_per_packet);
}

static void on_tun(void *ctx, uint32_t events)
{
	struct arqd *d = ctx;
	int i;

	(void)events;
	for (i = 0; i < FRAMES_PER_ROUND && arq_tx_room(&d->tx) >= d->frames_per_packet; i++) {
		ssize_t n = read(d->tun_fd, d->buf, sizeof(d->buf));

		if (n <= 0)
			break;
		arq_tx_submit(&d->tx, d->buf, (size_t)n);
	}
	pump(d);
}

static void on_frame(struct arqd *d, const uint8_t *buf, size_t len, uint64_t now)
{
	struct arq_frame f;
	enum arq_parse_result r = arq_frame_parse(buf, len, &f);

	if (r != ARQ_OK) {
		d->cnt.rejected++;
		d->cnt.rejected_by[r]++;
		return;
	}
	arq_tx_heard(&d->tx, now);
	switch (f.type) {
	case ARQ_DATA:
		d->cnt.data_frames_in++;
		arq_rx_on_data(&d->rx, &f, now);
		break;
	case ARQ_ACK:
		d->cnt.acks_in++;
		arq_tx_on_ack(&d->tx, f.seq, f.aux, now);
		break;
	case ARQ_STATUS:
		d->cnt.status_in++;
		arq_tx_on_status(&d->tx, f.seq, f.payload, f.len, now);
		break;
	}
}

static void on_link(void *ctx, uint32_t events)
{
	struct arqd *d = ctx;
	int i;

	if (events & EPOLLOUT && d->out_blocked) {
		d->out_blocked = false;
		evloop_watch(&d->loop, d->data_fd, EPOLLIN);
	}
	for (i = 0; i < FRAMES_PER_ROUND; i++) {
		struct sockaddr_ll from;
		socklen_t fromlen = sizeof(from);
		ssize_t n = recvfrom(d->data_fd, d->buf, sizeof(d->buf), 0, (struct sockaddr *)&from, &fromlen);

		if (n < 0)
			break;
		if (from.sll_pkttype == PACKET_OUTGOING)
			continue;
		d->cnt.frames_in++;
		on_frame(d, d->buf, (size_t)n, evloop_now_ns());
	}
	pump(d);
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

static uint64_t next_deadline(void *ctx)
{
	struct arqd *d = ctx;

	return earliest(earliest(arq_tx_deadline(&d->tx), arq_rx_deadline(&d->rx)), d->retry_at);
}

static void tick(void *ctx)
{
	struct arqd *d = ctx;
	uint64_t now = evloop_now_ns(), t;

	t = arq_tx_deadline(&d->tx);
	if (t && t <= now)
		arq_tx_on_timer(&d->tx, now);
	t = arq_rx_deadline(&d->rx);
	if (t && t <= now)
		arq_rx_on_timer(&d->rx, now);
	if (d->retry_at && d->retry_at <= now)
		d->retry_at = 0;
	pump(d);
}

static void report(void *ctx, struct json_out *j, uint32_t max_flows)
{
	(void)max_flows;
	arqd_report(ctx, j);
}

/* ---------------------------------------------------------------- lifecycle */

int arqd_start(struct arqd *d, const struct arq_config *cfg, char *err, size_t errlen)
{
	struct arq_tx_params tp;
	struct arq_rx_params rp;
	char ctl_path[CFG_PATH_MAX];

	memset(d, 0, sizeof(*d));
	evloop_init(&d->loop);
	d->tun_fd = d->data_fd = d->ctl_fd = -1;
	d->cfg = *cfg;
	d->started_ns = evloop_now_ns();
	if (open_link(d, err, errlen) < 0)
		return -1;
	tp = (struct arq_tx_params){
		.window = cfg->window,
		.max_rtx = cfg->max_rtx,
		.buffer_bytes = cfg->tx_buffer,
		.max_payload = d->link_ifmtu - ARQ_HDR_LEN,
		.rto_initial_ns = cfg->rto_initial_ns,
		.rto_min_ns = cfg->rto_min_ns,
		.rto_max_ns = cfg->rto_max_ns,
		.idle_repair = cfg->idle_repair,
	};
	if (cfg->link_mtu)
		tp.frag_payload = arq_frame_max(cfg->link_mtu, d->link_ifmtu) - ARQ_HDR_LEN - ARQ_FRAG_HDR_LEN;
	d->tun_mtu = cfg->tun_mtu ? cfg->tun_mtu : cfg->link_mtu ? 1500 : d->link_ifmtu - ARQ_HDR_LEN;
	if (!cfg->link_mtu && d->tun_mtu > tp.max_payload) {
		snprintf(err, errlen, "tun_mtu = %u: larger than link %s's MTU %u minus the %d-byte frame header "
			 "(set link_mtu to fragment)", d->tun_mtu, cfg->link, d->link_ifmtu, ARQ_HDR_LEN);
		return -1;
	}
	rp = (struct arq_rx_params){
		.feedback = (enum arq_feedback)cfg->feedback,
		.resequence = cfg->delivery == DELIVERY_RESEQUENCE,
		.window = cfg->rx_window,
		.buffer_bytes = cfg->rx_buffer,
		.reseq_timeout_ns = cfg->reseq_timeout_ns,
		.status_interval_ns = cfg->status_interval_ns,
		.status_max_bytes = d->link_ifmtu - ARQ_HDR_LEN < sizeof(d->ctl_frame) - ARQ_HDR_LEN
					    ? d->link_ifmtu - ARQ_HDR_LEN
					    : (uint32_t)(sizeof(d->ctl_frame) - ARQ_HDR_LEN),
		.reasm_slots = cfg->reasm_slots,
		.reasm_timeout_ns = cfg->reasm_timeout_ns,
	};
	if (arq_tx_init(&d->tx, &tp) < 0 || arq_rx_init(&d->rx, &rp, deliver, send_feedback, d) < 0) {
		snprintf(err, errlen, "window = %u, rx_window = %u: cannot allocate the buffers", cfg->window,
			 cfg->rx_window);
		return -1;
	}
	d->tx_ok = d->rx_ok = true;
	if (cfg->link_rate)
		d->pace_burst_ns = cfg->pace_frames * wire_ns(d, arq_frame_max(cfg->link_mtu, d->link_ifmtu));
	d->frames_per_packet = arq_tx_frames_for(&d->tx, d->tun_mtu);
	if (open_tun(d, err, errlen) < 0)
		return -1;
	arq_ctl_path(cfg, ctl_path, sizeof(ctl_path));
	if (evloop_open(&d->loop, "arqd", ctl_path, report, d, err, errlen) < 0)
		return -1;
	if (evloop_add(&d->loop, d->tun_fd, EPOLLIN, on_tun, d) < 0 ||
	    evloop_add(&d->loop, d->data_fd, EPOLLIN, on_link, d) < 0) {
		snprintf(err, errlen, "event loop set-up: %s", strerror(errno));
		return -1;
	}
	d->tun_reading = true;
	/* routes last: by now everything that carries the packets is in place */
	if (install_routes(d, err, errlen) < 0)
		return -1;
	fprintf(stderr, "arqd: link %s, tun %s (mtu %u), feedback %s, delivery %s, window %u, max_rtx %u%s%s\n",
		cfg->link, cfg->tun, d->tun_mtu, cfg_enum_name(&arqd_schema, "feedback", cfg->feedback),
		cfg_enum_name(&arqd_schema, "delivery", cfg->delivery), cfg->window, cfg->max_rtx,
		cfg->nprefix ? ", routes " : "", cfg->routes);
	return 0;
}

int arqd_run(struct arqd *d)
{
	return evloop_run(&d->loop, next_deadline, tick, d, "arqd");
}

void arqd_stop(struct arqd *d)
{
	remove_rules(d);
	if (d->tun_fd >= 0)
		close(d->tun_fd);	/* the device and its routes go with it */
	if (d->data_fd >= 0)
		close(d->data_fd);
	if (d->ctl_fd >= 0)
		close(d->ctl_fd);
	d->tun_fd = d->data_fd = d->ctl_fd = -1;
	evloop_close(&d->loop);
	if (d->tx_ok)
		arq_tx_free(&d->tx);
	if (d->rx_ok)
		arq_rx_free(&d->rx);
	d->tx_ok = d->rx_ok = false;
}

/* ---------------------------------------------------------------- stats */

void arqd_report(struct arqd *d, struct json_out *j)
{
	const struct arq_rx_counters *rc = &d->rx.cnt;
	const struct arq_tx_counters *tc = &d->tx.cnt;
	int r;

	jo_obj_begin(j, NULL);
	jo_obj_begin(j, "arqd");
	jo_str(j, "version", ARQD_VERSION);
	jo_str(j, "link", d->cfg.link);
	jo_str(j, "tun", d->cfg.tun);
	jo_str(j, "feedback", cfg_enum_name(&arqd_schema, "feedback", d->cfg.feedback));
	jo_str(j, "delivery", cfg_enum_name(&arqd_schema, "delivery", d->cfg.delivery));
	jo_u64(j, "window", d->cfg.window);
	jo_u64(j, "max_rtx", d->cfg.max_rtx);
	jo_bool(j, "idle_repair", d->cfg.idle_repair);
	jo_u64(j, "link_mtu", d->cfg.link_mtu);
	jo_u64(j, "link_rate_bps", d->cfg.link_rate);
	jo_u64(j, "tun_mtu", d->tun_mtu);
	jo_dbl(j, "uptime_s", (double)(evloop_now_ns() - d->started_ns) / 1e9);
	jo_obj_end(j);

	jo_obj_begin(j, "link");
#define ARQD_OUT(name, desc) jo_u64(j, #name, d->cnt.name);
	ARQD_LINK_COUNTERS(ARQD_OUT)
#undef ARQD_OUT
	jo_obj_begin(j, "rejected_by_reason");
	for (r = ARQ_OK + 1; r < ARQ__PARSE_COUNT; r++)
		jo_u64(j, arq_parse_result_name((enum arq_parse_result)r), d->cnt.rejected_by[r]);
	jo_obj_end(j);
	jo_obj_end(j);

	jo_obj_begin(j, "sender");
#define ARQ_TX_OUT(name, desc) jo_u64(j, #name, tc->name);
	ARQ_TX_COUNTERS(ARQ_TX_OUT)
#undef ARQ_TX_OUT
	jo_u64(j, "outstanding_now", arq_tx_outstanding(&d->tx));
	jo_u64(j, "rtx_queue_now", d->tx.rtx_count);
	jo_u64(j, "buffered_bytes_now", d->tx.bytes);
	jo_dbl(j, "srtt_ms", d->tx.have_rtt ? (double)d->tx.srtt_ns / 1e6 : -1.0);
	jo_dbl(j, "rto_ms", (double)d->tx.rto_ns / 1e6);
	jo_obj_end(j);

	jo_obj_begin(j, "receiver");
#define ARQ_RX_OUT(name, desc) jo_u64(j, #name, rc->name);
	ARQ_RX_COUNTERS(ARQ_RX_OUT)
#undef ARQ_RX_OUT
	jo_u64(j, "reorder_depth_max", rc->reorder_depth_max);
	jo_dbl(j, "reorder_depth_mean",
	       rc->frames_out_of_order ? (double)rc->reorder_depth_sum / (double)rc->frames_out_of_order : 0.0);
	jo_u64(j, "reseq_held_now", d->rx.nheld);
	jo_u64(j, "reseq_held_max", rc->reseq_held_max);
	jo_u64(j, "buffered_bytes_now", d->rx.bytes);
	jo_obj_end(j);
	jo_obj_end(j);
}
