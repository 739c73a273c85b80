// SPDX-License-Identifier: GPL-2.0-only
/*
 * NFQUEUE glue and the event loop.
 *
 * One thread, one queue, the shared event loop (evloop.h): the netlink
 * socket (packets), its timer (the earliest flow timer or the next idle
 * sweep), signals and the control socket (pepd stats).  Packets are read
 * until the socket is empty, each is parsed, given to its flow's filter and
 * answered; the verdicts of one round go back in one netlink batch.  Every
 * packet is accepted (or dropped) at once, never held: the cache keeps a
 * copy, so the queue never fills because of pepd's own bookkeeping.
 *
 * Order on the wire: a local retransmission is sent (raw socket) while its
 * trigger is processed, before the verdicts of the round are sent, so it
 * enters the egress queue ahead of the new data accepted in the same round.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "daemon.h"
#include "rules.h"

#define BATCH_LIMIT (64 * 1024)
#define NL_CONFIG_BUF 8192		/* config messages are small */
#define RX_BUF_SIZE (0xffff + MNL_SOCKET_BUFFER_SIZE)
#define PACKETS_PER_ROUND 256		/* then look at timers and the control socket again */
#define IDLE_SWEEP_NS 1000000000ULL
#define IFINDEX_RECHECK_NS 1000000000ULL

uint64_t pepd_now_ns(void)
{
	return evloop_now_ns();
}

void pepd_ctl_path(const struct pep_config *cfg, char *path, size_t len)
{
	if (cfg->control_socket[0])
		snprintf(path, len, "%s", cfg->control_socket);
	else
		snprintf(path, len, "/run/pepd/pepd-%u.sock", cfg->queue);
}

/* ---------------------------------------------------------------- netlink */

static int nl_send(struct pepd *d, struct nlmsghdr *nlh)
{
	return mnl_socket_sendto(d->nl, nlh, nlh->nlmsg_len) < 0 ? -1 : 0;
}

static int queue_config(struct pepd *d, char *err, size_t errlen)
{
	char buf[NL_CONFIG_BUF];
	struct nlmsghdr *nlh;
	uint32_t flags = 0, mask = NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO;
	int one = 1, size = (int)d->cfg.socket_buffer;

	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, d->cfg.queue);
	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
	if (nl_send(d, nlh) < 0) {
		snprintf(err, errlen, "binding NFQUEUE %u: %s%s", d->cfg.queue, strerror(errno),
			 errno == EBUSY ? " (another program holds this queue)" : "");
		return -1;
	}
	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, d->cfg.queue);
	nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, 0xffff);
	nfq_nlmsg_cfg_put_qmaxlen(nlh, d->cfg.queue_maxlen);
	if (d->cfg.fail_open)
		flags |= NFQA_CFG_F_FAIL_OPEN;
	if (d->cfg.gso)
		flags |= NFQA_CFG_F_GSO;
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(flags));
	mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(mask));
	if (nl_send(d, nlh) < 0) {
		snprintf(err, errlen, "configuring NFQUEUE %u: %s", d->cfg.queue, strerror(errno));
		return -1;
	}
	/* A full socket must not stall us: with fail-open the kernel accepts instead. */
	mnl_socket_setsockopt(d->nl, NETLINK_NO_ENOBUFS, &one, sizeof(one));
	if (setsockopt(mnl_socket_get_fd(d->nl), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(mnl_socket_get_fd(d->nl), SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	return 0;
}

static void queue_unbind(struct pepd *d)
{
	char buf[NL_CONFIG_BUF];
	struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, d->cfg.queue);

	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_UNBIND);
	nl_send(d, nlh);
}

static void batch_flush(struct pepd *d)
{
	size_t size = mnl_nlmsg_batch_size(d->batch);

	if (size && mnl_socket_sendto(d->nl, mnl_nlmsg_batch_head(d->batch), size) < 0)
		d->stats.netlink_errors++;
	/* also moves a message that overflowed the batch to the front of the next one */
	mnl_nlmsg_batch_reset(d->batch);
}

static void verdict(struct pepd *d, uint32_t id, int v, const uint8_t *payload, uint32_t len)
{
	struct nlmsghdr *nlh = nfq_nlmsg_put(mnl_nlmsg_batch_current(d->batch), NFQNL_MSG_VERDICT, d->cfg.queue);

	nfq_nlmsg_verdict_put(nlh, (int)id, v);
	if (payload)
		nfq_nlmsg_verdict_put_pkt(nlh, payload, len);
	/* false: the batch is over its limit; this message moves to the next one */
	if (!mnl_nlmsg_batch_next(d->batch))
		batch_flush(d);
}

/* ---------------------------------------------------------------- interfaces */

static void resolve_interfaces(struct pepd *d)
{
	struct ifreq ifr;
	uint32_t i, mtu = 0;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	for (i = 0; i < d->cfg.nwireless; i++) {
		d->ifindex[i] = if_nametoindex(d->cfg.wireless[i]);
		if (fd < 0)
			continue;
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", d->cfg.wireless[i]);
		if (ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0 && (!mtu || (uint32_t)ifr.ifr_mtu < mtu))
			mtu = (uint32_t)ifr.ifr_mtu;
	}
	if (fd >= 0)
		close(fd);
	d->inj.mtu = mtu ? mtu : 1500;
}

static bool is_wireless(struct pepd *d, uint32_t ifindex)
{
	uint32_t i;

	if (!ifindex)
		return false;
	for (i = 0; i < d->cfg.nwireless; i++)
		if (d->ifindex[i] == ifindex)
			return true;
	return false;
}

/* ---------------------------------------------------------------- per packet */

/* ---------------------------------------------------------------- tracing (debug) */

static void trace_out(struct pepd *d, const struct pep_out *out)
{
	uint32_t i;

	fprintf(d->trace, " -> %s", out->verdict == VERDICT_DROP ? "drop" : out->verdict == VERDICT_INJECT ? "inject" : "accept");
	if (out->hide_sack)
		fprintf(d->trace, "+hide");
	for (i = 0; i < out->nact; i++)
		fprintf(d->trace, " %s:%u*%u", out->act[i].type == ACTION_SEND_SEGMENT ? "rtx" : "ack", out->act[i].seq,
			out->act[i].copies);
	if (out->timer_op == TIMER_SET)
		fprintf(d->trace, " timer+%.1fms", (double)(out->timer_at - pepd_now_ns()) / 1e6);
	else if (out->timer_op == TIMER_CANCEL)
		fprintf(d->trace, " timer-off");
}

static void trace_packet(struct pepd *d, const struct flow *f, const struct pkt *p, enum pep_dir dir,
			 const struct pep_out *out, uint64_t now)
{
	int b;

	fprintf(d->trace, "%.3f %llu %s seq=%u ack=%u len=%u win=%u fl=%02x", (double)(now - d->started_ns) / 1e6,
		(unsigned long long)f->id, dir == DIR_TO_WIRELESS ? "D" : "A", p->seq, p->ack, p->payload_len,
		p->window, p->flags);
	for (b = 0; b < p->nsack; b++)
		fprintf(d->trace, "%s%u-%u", b ? "," : " sack=", p->sack[b].start, p->sack[b].end);
	trace_out(d, out);
	fprintf(d->trace, " cache=%u\n", f->cache.count);
}

/* A send the egress queue refused: congestion (anything else is a local fault). */
static bool refused_by_queue(int r)
{
	return r == -ENOBUFS || r == -EAGAIN;
}

/*
 * Send the cached segment at seq and tell the filter whether the egress
 * queue took it; returns what inject_segment returned.  If the send failed
 * for another reason than a full queue, *fallback says the original should
 * go the kernel's way instead (its verdict is still open).
 */
static int send_cached(struct pepd *d, struct flow *f, const struct pep_ctx *ctx, uint32_t seq, unsigned int copies,
		       bool repair, bool *fallback)
{
	long idx = segq_find(&f->cache, seq);
	int r;

	if (idx < 0)
		return -ENOENT;
	r = inject_segment(&d->inj, f, segq_at(&f->cache, (uint32_t)idx), copies, repair);
	if (r < 0) {
		f->cnt.inject_errors++;
		d->stats.total.inject_errors++;
	}
	if (d->trace)
		fprintf(d->trace, "%.3f %llu send %u*%u %s\n", (double)(ctx->now - d->started_ns) / 1e6,
			(unsigned long long)f->id, seq, copies, r > 0 ? "queued" : strerror(-r));
	if (fallback && r < 0 && !refused_by_queue(r)) {
		*fallback = true;	/* e.g. a firewall in OUTPUT: let the original pass */
		r = 1;
	}
	if (d->ops->sent)
		d->ops->sent(f, seq, r > 0 || !refused_by_queue(r), ctx);
	return r;
}

static void do_actions(struct pepd *d, struct flow *f, const struct pep_ctx *ctx, const struct pep_out *out)
{
	uint32_t i;

	for (i = 0; i < out->nact; i++) {
		const struct pep_action *a = &out->act[i];

		if (a->type == ACTION_SEND_SEGMENT) {
			send_cached(d, f, ctx, a->seq, a->copies, true, NULL);
		} else if (inject_ack(&d->inj, f, a->seq) < 0) {
			f->cnt.inject_errors++;
			d->stats.total.inject_errors++;
		}
	}
}

static void apply_timer(struct pepd *d, struct flow *f, const struct pep_out *out)
{
	if (out->timer_op == TIMER_SET)
		flow_timer_set(&d->ft, f, out->timer_at);
	else if (out->timer_op == TIMER_CANCEL)
		flow_timer_cancel(&d->ft, f);
}

static void log_flow_end(struct pepd *d, const struct flow *f, const char *why)
{
	char fh[INET6_ADDRSTRLEN], wh[INET6_ADDRSTRLEN];
	int af = f->key.family == 4 ? AF_INET : AF_INET6;

	if (!d->cfg.log_flows)
		return;
	inet_ntop(af, f->key.fh, fh, sizeof(fh));
	inet_ntop(af, f->key.wh, wh, sizeof(wh));
	fprintf(stderr,
		"pepd: flow %s:%u -> %s:%u %s: data %llu, local_rtx %llu+%llu timer, copies %llu, dupacks dropped "
		"%llu, sack hidden %llu, acks generated %llu, data dropped %llu\n",
		fh, f->key.fh_port, wh, f->key.wh_port, why, (unsigned long long)f->cnt.data_packets,
		(unsigned long long)f->cnt.local_rtx, (unsigned long long)f->cnt.local_rtx_timer,
		(unsigned long long)f->cnt.copies_sent, (unsigned long long)f->cnt.dupacks_dropped,
		(unsigned long long)f->cnt.sack_hidden, (unsigned long long)f->cnt.acks_generated,
		(unsigned long long)f->cnt.data_dropped);
}

static void handle_packet(struct pepd *d, uint32_t id, const uint8_t *data, uint32_t len, uint32_t cap_len,
			  uint32_t indev, uint32_t outdev, uint32_t skbinfo)
{
	struct pep_ctx ctx = { .cfg = &d->cfg, .budget = &d->ft.budget, .total = &d->stats.total };
	struct flow_key key;
	struct pep_out out;
	enum pkt_result r;
	enum pep_dir dir;
	struct flow *f;
	struct pkt p;

	d->stats.packets++;
	if (d->have_id && id > d->last_id + 1)
		d->stats.fail_open_gaps += id - d->last_id - 1;
	d->have_id = true;
	d->last_id = id;
	if (cap_len && cap_len != len) {
		d->stats.truncated++;
		verdict(d, id, NF_ACCEPT, NULL, 0);
		return;
	}
	r = pkt_parse(data, len, &p);
	d->stats.parse[r]++;
	if (r != PKT_OK) {
		verdict(d, id, NF_ACCEPT, NULL, 0);	/* malformed or not ours: unchanged */
		return;
	}
	if (p.family == 6)
		d->stats.ipv6_packets++;
	if (skbinfo & NFQA_SKB_GSO)
		d->stats.gso_packets++;
	ctx.now = pepd_now_ns();
	if (!is_wireless(d, outdev) && !is_wireless(d, indev) && ctx.now - d->ifindex_checked_ns > IFINDEX_RECHECK_NS) {
		d->ifindex_checked_ns = ctx.now;	/* an interface may have been re-created */
		resolve_interfaces(d);
	}
	if (is_wireless(d, outdev)) {
		dir = DIR_TO_WIRELESS;
	} else if (is_wireless(d, indev)) {
		dir = DIR_FROM_WIRELESS;
	} else {
		d->foreign_packets++;
		verdict(d, id, NF_ACCEPT, NULL, 0);
		return;
	}
	flow_key_of(&p, dir, &key);
	f = flow_lookup(&d->ft, &key);
	if (!f) {
		bool syn = p.flags & TCPF_SYN;

		/* a SYN, or (adopting) data towards the wireless host: never a lone ACK, FIN or RST */
		bool adopt = d->cfg.adopt_midstream && dir == DIR_TO_WIRELESS && p.payload_len > 0;

		if ((!syn && !adopt) || (p.flags & TCPF_RST)) {
			verdict(d, id, NF_ACCEPT, NULL, 0);
			return;
		}
		f = flow_create(&d->ft, &key, ctx.now);
		if (!f) {
			d->stats.flows_untracked++;
			verdict(d, id, NF_ACCEPT, NULL, 0);
			return;
		}
		d->stats.flows_created++;
		f->conn.midstream = !syn;
		d->ops->init(f, &ctx);
	}
	if ((p.flags & (TCPF_SYN | TCPF_ACK)) == TCPF_SYN && (f->conn.closed || f->conn.fh_syn || f->conn.wh_syn)) {
		/* a new connection on a 4-tuple seen before: start from scratch, keep the counters */
		segq_clear(&f->cache, &d->ft.budget);
		flow_timer_cancel(&d->ft, f);
		memset(&f->conn, 0, sizeof(f->conn));
		d->ops->init(f, &ctx);
	}
	flow_touch(&d->ft, f, ctx.now);
	conn_observe(&f->conn, &p, dir);
	out_reset(&out);
	d->ops->packet(f, &p, dir, &ctx, &out);
	if (d->trace)
		trace_packet(d, f, &p, dir, &out, ctx.now);
	apply_timer(d, f, &out);
	do_actions(d, f, &ctx, &out);
	if (out.verdict == VERDICT_DROP) {
		verdict(d, id, NF_DROP, NULL, 0);
	} else if (out.verdict == VERDICT_INJECT) {
		bool fallback = false;

		send_cached(d, f, &ctx, out.inject_seq, 1, false, &fallback);
		verdict(d, id, fallback ? NF_ACCEPT : NF_DROP, NULL, 0);
	} else if (((out.sack_one || out.hide_sack) && p.sack_opt_off) || out.set_window) {
		build_edit_ack(&p, out.hide_sack && p.sack_opt_off, out.sack_one && p.sack_opt_off ? &out.sack_one_block : NULL,
			       out.set_window ? out.window : -1, d->scratch);
		verdict(d, id, NF_ACCEPT, d->scratch, p.len);
		d->stats.verdicts_mangled++;
	} else {
		verdict(d, id, NF_ACCEPT, NULL, 0);
	}
	if (f->conn.closed && !f->cache.count && f->deadline)
		flow_timer_cancel(&d->ft, f);	/* reset: kept (for its counters) until idle_timeout */
}

static int queue_cb(const struct nlmsghdr *nlh, void *data)
{
	struct pepd *d = data;
	struct nlattr *attr[NFQA_MAX + 1] = { NULL };
	struct nfqnl_msg_packet_hdr *ph;
	uint32_t cap_len = 0, indev = 0, outdev = 0, skbinfo = 0;

	if (nfq_nlmsg_parse(nlh, attr) < 0 || !attr[NFQA_PACKET_HDR]) {
		d->stats.netlink_errors++;
		return MNL_CB_OK;
	}
	ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	if (attr[NFQA_CAP_LEN])
		cap_len = ntohl(mnl_attr_get_u32(attr[NFQA_CAP_LEN]));
	if (attr[NFQA_IFINDEX_INDEV])
		indev = ntohl(mnl_attr_get_u32(attr[NFQA_IFINDEX_INDEV]));
	if (attr[NFQA_IFINDEX_OUTDEV])
		outdev = ntohl(mnl_attr_get_u32(attr[NFQA_IFINDEX_OUTDEV]));
	if (attr[NFQA_SKB_INFO])
		skbinfo = ntohl(mnl_attr_get_u32(attr[NFQA_SKB_INFO]));
	if (!attr[NFQA_PAYLOAD]) {
		d->stats.parse[PKT_ERR_EMPTY]++;
		verdict(d, ntohl(ph->packet_id), NF_ACCEPT, NULL, 0);
		return MNL_CB_OK;
	}
	handle_packet(d, ntohl(ph->packet_id), mnl_attr_get_payload(attr[NFQA_PAYLOAD]),
		      mnl_attr_get_payload_len(attr[NFQA_PAYLOAD]), cap_len, indev, outdev, skbinfo);
	return MNL_CB_OK;
}

static void read_packets(struct pepd *d)
{
	int n, i;

	for (i = 0; i < PACKETS_PER_ROUND; i++) {
		n = (int)mnl_socket_recvfrom(d->nl, d->rxbuf, d->rxlen);
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				d->stats.netlink_errors++;
			break;
		}
		if (mnl_cb_run(d->rxbuf, (size_t)n, 0, d->portid, queue_cb, d) < 0)
			d->stats.netlink_errors++;
	}
	batch_flush(d);
}

/* ---------------------------------------------------------------- timers */

static void run_timers(struct pepd *d)
{
	struct pep_ctx ctx = { .cfg = &d->cfg, .budget = &d->ft.budget, .total = &d->stats.total };
	struct pep_out out;
	struct flow *f;

	ctx.now = pepd_now_ns();
	while ((f = flow_timer_expired(&d->ft, ctx.now))) {
		out_reset(&out);
		d->ops->timer(f, &ctx, &out);
		if (d->trace) {
			fprintf(d->trace, "%.3f %llu timer", (double)(ctx.now - d->started_ns) / 1e6,
				(unsigned long long)f->id);
			trace_out(d, &out);
			fprintf(d->trace, " cache=%u\n", f->cache.count);
		}
		apply_timer(d, f, &out);
		do_actions(d, f, &ctx, &out);
	}
	while ((f = flow_oldest_idle(&d->ft, ctx.now, d->cfg.idle_timeout_ns))) {
		log_flow_end(d, f, "idle");
		d->stats.flows_expired++;
		flow_destroy(&d->ft, f);
	}
}

/* The earliest flow timer, or the next idle sweep. */
static uint64_t next_deadline(void *ctx)
{
	struct pepd *d = ctx;
	uint64_t next = flow_timer_next(&d->ft), sweep = pepd_now_ns() + IDLE_SWEEP_NS;

	return !next || next > sweep ? sweep : next;
}

static void tick(void *ctx)
{
	run_timers(ctx);
}

static void on_netlink(void *ctx, uint32_t events)
{
	(void)events;
	read_packets(ctx);
}

static void report(void *ctx, struct json_out *j, uint32_t max_flows)
{
	pepd_report(ctx, j, max_flows);
}

/* ---------------------------------------------------------------- lifecycle */

int pepd_start(struct pepd *d, const struct pep_config *cfg, char *err, size_t errlen)
{
	char ctl_path[PEP_PATH_MAX];
	uint64_t seed = 0;
	int fl;

	memset(d, 0, sizeof(*d));
	evloop_init(&d->loop);
	d->inj.fd4 = d->inj.fd6 = d->inj.rtx4 = d->inj.rtx6 = -1;
	d->cfg = *cfg;
	d->ops = filter_ops(cfg->filter);
	d->started_ns = pepd_now_ns();
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = d->started_ns;
	if (flow_table_init(&d->ft, cfg->max_flows, seed, cfg->total_cache_bytes, (uint32_t)cfg->flow_cache_bytes) < 0) {
		snprintf(err, errlen, "max_flows = %u: cannot allocate the flow table", cfg->max_flows);
		return -1;
	}
	resolve_interfaces(d);
	for (uint32_t i = 0; i < cfg->nwireless; i++)
		if (!d->ifindex[i])
			fprintf(stderr, "pepd: warning: wireless = %s: no such interface (yet); watching for it\n",
				cfg->wireless[i]);
	if (inject_open(&d->inj, cfg->mark, cfg->rtx_priority, err, errlen) < 0)
		return -1;
	if (cfg->trace_file[0]) {
		d->trace = fopen(cfg->trace_file, "w");
		if (!d->trace) {
			snprintf(err, errlen, "trace_file = %s: %s", cfg->trace_file, strerror(errno));
			return -1;
		}
		setvbuf(d->trace, NULL, _IOFBF, 1 << 20);
	}
	d->rxlen = RX_BUF_SIZE;
	d->rxbuf = malloc(d->rxlen);
	d->txbuf = malloc(BATCH_LIMIT + 0xffff + MNL_SOCKET_BUFFER_SIZE);
	if (!d->rxbuf || !d->txbuf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	d->batch = mnl_nlmsg_batch_start(d->txbuf, BATCH_LIMIT);
	d->nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!d->nl || mnl_socket_bind(d->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "netlink socket: %s (needs CAP_NET_ADMIN)", strerror(errno));
		return -1;
	}
	d->portid = mnl_socket_get_portid(d->nl);
	if (queue_config(d, err, errlen) < 0)
		return -1;
	fl = fcntl(mnl_socket_get_fd(d->nl), F_GETFL);
	fcntl(mnl_socket_get_fd(d->nl), F_SETFL, fl | O_NONBLOCK);

	pepd_ctl_path(cfg, ctl_path, sizeof(ctl_path));
	if (evloop_open(&d->loop, "pepd", ctl_path, report, d, err, errlen) < 0)
		return -1;
	if (evloop_add(&d->loop, mnl_socket_get_fd(d->nl), EPOLLIN, on_netlink, d) < 0) {
		snprintf(err, errlen, "event loop set-up: %s", strerror(errno));
		return -1;
	}
	/* Rules last: by now everything that takes the packets is in place. */
	if (rules_install(cfg, &d->rules_used, err, errlen) < 0)
		return -1;
	d->rules_installed = cfg->rules != RULES_NONE;
	fprintf(stderr, "pepd: queue %u, filter %s, wireless %s%s, rules %s, fail-open %s, gso %s\n", cfg->queue,
		config_filter_name(cfg->filter), cfg->wireless[0], cfg->nwireless > 1 ? " ..." : "",
		config_rules_name(d->rules_used), cfg->fail_open ? "on" : "off", cfg->gso ? "on" : "off");
	return 0;
}

int pepd_run(struct pepd *d)
{
	return evloop_run(&d->loop, next_deadline, tick, d, "pepd");
}

void pepd_stop(struct pepd *d)
{
	if (d->rules_installed)
		rules_remove(&d->cfg, d->rules_used);
	d->rules_installed = false;
	if (d->nl) {
		queue_unbind(d);
		mnl_socket_close(d->nl);
		d->nl = NULL;
	}
	evloop_close(&d->loop);
	inject_close(&d->inj);
	if (d->batch)
		mnl_nlmsg_batch_stop(d->batch);
	d->batch = NULL;
	free(d->rxbuf);
	free(d->txbuf);
	d->rxbuf = d->txbuf = NULL;
	flow_table_free(&d->ft);
	if (d->trace)
		fclose(d->trace);
	d->trace = NULL;
}
