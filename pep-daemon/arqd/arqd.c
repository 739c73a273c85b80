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
 * Routes into the TUN device: routes.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "arqd.h"
#include "version.h"

#define FRAMES_PER_ROUND 256
#define RETRY_NS 1000000ULL	/* a full qdisc: try again in 1 ms */

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
	if (d->link_ifmtu <= ARQ_HDR_LEN + arq_fields_len(ARQ_F_ACK | ARQ_F_FRAG) + 64) {
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
		bool carried;
		size_t n;

		if (d->cfg.link_rate && d->pace_next_ns > now + d->pace_burst_ns) {
			d->cnt.send_paced++;
			d->retry_at = d->pace_next_ns - d->pace_burst_ns;
			break;
		}
		carried = arq_rx_ack_waiting(&d->rx, &f.ack_cum);
		if (carried)
			f.flags |= ARQ_F_ACK;
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
		if (carried)
			arq_rx_ack_carried(&d->rx);
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
		if (f.flags & ARQ_F_ACK)
			arq_tx_on_carried_ack(&d->tx, f.ack_cum, now);
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
		/* the peer is bound: a frame from anyone else never reaches the state machines */
		if (from.sll_halen != 6 || memcmp(from.sll_addr, d->cfg.peer, 6) != 0) {
			d->cnt.foreign_frames++;
			continue;
		}
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

/* In the loop's thread, between two frames: the control thread asked for the statistics. */
static void render(void *ctx, struct ctl_snapshot *s)
{
	arqd_report(ctx, &s->out);
}

static void on_snapshot(void *ctx, uint32_t events)
{
	struct arqd *d = ctx;

	(void)events;
	ctl_snapshot_serve(&d->snap, render, d);
}

/* In the control thread: the loop's objects, then the control socket's own counters (arqd lists nothing). */
static void report(void *ctx, struct json_out *j, const struct ctl_call *call)
{
	struct arqd *d = ctx;
	struct json_out at;

	jo_init(&at, j->human);
	jo_obj_begin(&at, NULL);
	jo_obj_begin(j, NULL);
	if (ctl_snapshot_take(&d->snap, &at, 0, call->stop_fd) < 0) {
		jo_str(j, "error", "arqd's loop did not answer (stopping, or stuck)");
	} else {
		jo_splice(j, &d->snap.out);
		jo_free(&d->snap.out);
	}
	jo_free(&at);
	ctl_report_counters(j, call->counters);
	jo_obj_end(j);
}

/* ---------------------------------------------------------------- lifecycle */

int arqd_start(struct arqd *d, const struct arq_config *cfg, char *err, size_t errlen)
{
	struct arq_tx_params tp;
	struct arq_rx_params rp;
	char ctl_path[CFG_PATH_MAX];
	uint32_t hdr;

	memset(d, 0, sizeof(*d));
	evloop_init(&d->loop);
	ctl_server_init(&d->ctl);
	d->snap.ask_fd = d->snap.done_fd = -1;
	d->tun_fd = d->data_fd = d->ctl_fd = -1;
	d->cfg = *cfg;
	d->started_ns = evloop_now_ns();
	/* first: another arqd answering on this socket must stop us before we touch anything */
	arq_ctl_path(cfg, ctl_path, sizeof(ctl_path));
	if (ctl_server_open(&d->ctl, ctl_path, "arqd", err, errlen) < 0)
		return -1;
	if (open_link(d, err, errlen) < 0)
		return -1;
	/* with ack_delay, any data frame may carry an ack: the room is kept in every one */
	hdr = ARQ_HDR_LEN + (cfg->ack_delay_ns ? ARQ_ACK_FIELD_LEN : 0);
	tp = (struct arq_tx_params){
		.window = cfg->window,
		.max_rtx = cfg->max_rtx,
		.buffer_bytes = cfg->tx_buffer,
		.max_payload = d->link_ifmtu - hdr,
		.rto_initial_ns = cfg->rto_initial_ns,
		.rto_min_ns = cfg->rto_min_ns,
		.rto_max_ns = cfg->rto_max_ns,
		.idle_repair = cfg->idle_repair,
		.timer_restart = cfg->timer_restart,
	};
	/* a restart numbers from elsewhere: the peer's receiver sees a new sender, not old frames */
	if (getrandom(&tp.isn, sizeof(tp.isn), 0) != sizeof(tp.isn))
		tp.isn = (uint32_t)d->started_ns;
	if (cfg->link_mtu)
		tp.frag_payload = arq_frame_max(cfg->link_mtu, d->link_ifmtu) - hdr - ARQ_FRAG_HDR_LEN;
	d->tun_mtu = cfg->tun_mtu ? cfg->tun_mtu : cfg->link_mtu ? 1500 : d->link_ifmtu - hdr;
	if (!cfg->link_mtu && d->tun_mtu > tp.max_payload) {
		snprintf(err, errlen, "tun_mtu = %u: larger than link %s's MTU %u minus the %u-byte frame header "
			 "(set link_mtu to fragment)", d->tun_mtu, cfg->link, d->link_ifmtu, hdr);
		return -1;
	}
	rp = (struct arq_rx_params){
		.feedback = (enum arq_feedback)cfg->feedback,
		.resequence = cfg->delivery == DELIVERY_RESEQUENCE,
		.window = cfg->rx_window,
		.buffer_bytes = cfg->rx_buffer,
		.reseq_timeout_ns = cfg->reseq_timeout_ns,
		.status_interval_ns = cfg->status_interval_ns,
		.ack_delay_ns = cfg->ack_delay_ns,
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
	if (evloop_open(&d->loop, err, errlen) < 0 || ctl_snapshot_open(&d->snap, err, errlen) < 0)
		return -1;
	if (evloop_add(&d->loop, d->tun_fd, EPOLLIN, on_tun, d) < 0 ||
	    evloop_add(&d->loop, d->data_fd, EPOLLIN, on_link, d) < 0 ||
	    evloop_add(&d->loop, d->snap.ask_fd, EPOLLIN, on_snapshot, d) < 0) {
		snprintf(err, errlen, "event loop set-up: %s", strerror(errno));
		return -1;
	}
	d->tun_reading = true;
	/* routes last: by now everything that carries the packets is in place */
	if (routes_install(&d->routes, &d->cfg, d->tun_ifindex, err, errlen) < 0)
		return -1;
	/* the control socket's own thread, once everything is set: an answer to ping means arqd is ready */
	if (ctl_server_start(&d->ctl, report, d, err, errlen) < 0)
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
	ctl_server_stop(&d->ctl);	/* first: its thread asks the loop's state */
	routes_remove(&d->routes, &d->cfg);
	if (d->tun_fd >= 0)
		close(d->tun_fd);	/* the device and its routes go with it */
	if (d->data_fd >= 0)
		close(d->data_fd);
	if (d->ctl_fd >= 0)
		close(d->ctl_fd);
	d->tun_fd = d->data_fd = d->ctl_fd = -1;
	evloop_close(&d->loop);
	ctl_snapshot_close(&d->snap);
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

	jo_obj_begin(j, "arqd");
	jo_str(j, "version", airtcp_version());
	jo_str(j, "link", d->cfg.link);
	jo_str(j, "tun", d->cfg.tun);
	jo_str(j, "feedback", cfg_enum_name(&arqd_schema, "feedback", d->cfg.feedback));
	jo_str(j, "delivery", cfg_enum_name(&arqd_schema, "delivery", d->cfg.delivery));
	jo_u64(j, "window", d->cfg.window);
	jo_u64(j, "max_rtx", d->cfg.max_rtx);
	jo_bool(j, "idle_repair", d->cfg.idle_repair);
	jo_bool(j, "timer_restart", d->cfg.timer_restart);
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
}
