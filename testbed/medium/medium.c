// SPDX-License-Identifier: GPL-2.0
/*
 * airtcp-medium: the radio medium for mac80211_hwsim radios, playing the
 * hardware a real card would be.
 *
 *   airtcp-medium --radio NAME=MAC [--radio NAME=MAC ...]
 *                 [--loss down:SPEC] [--loss up:SPEC] [--max-attempts N]
 *                 [--queue [down:|up:]FRAMES] [--stats FILE] [--start-at now|wait|NS]
 *                 [--signal DBM] [--check]
 *
 * It registers as the medium of its network namespace's hwsim group
 * (HWSIM_CMD_REGISTER), creates the radios (HWSIM_CMD_NEW_RADIO, gone
 * again when it exits), prints one line of JSON when they exist, then for
 * each frame a radio transmits (HWSIM_CMD_FRAME) walks the retry chain
 * mac80211 chose, one transmission at a time on the shared medium
 * (decide.c), delivers the frame to the receiving radio when its
 * successful attempt ends (HWSIM_CMD_FRAME) and reports the attempts and
 * the ACK back to the sender (HWSIM_CMD_TX_INFO_FRAME).  The first radio
 * is the access point: what it sends travels "down", the others' "up".
 *
 * The loss models run from --start-at on (before it the channel is
 * perfect, e.g. while stations associate); "wait" waits for a line
 * "start NS" (CLOCK_MONOTONIC) or "start now" on stdin.  Counters go to
 * --stats as JSON on SIGUSR1 and at exit (SIGTERM, SIGINT).  --check
 * prints the configuration as parsed (JSON) and exits: nothing is opened.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "decide.h"
#include "hwsim_msg.h"
#include "lossmodel.h"

#define MAX_RADIOS 8
#define MAX_ALIASES 4
#define POOL_FRAMES 512		/* frames waiting for or on the air, all radios */
#define QUEUE_MAX 150		/* per radio: hwsim drops its own pending frames at 200 */
#define QUEUE_DEFAULT 100
#define HIST_MAX 16		/* attempts per frame histogram */
#define RATES_SEEN 48		/* distinct PHY rates counted (12 legacy + 32 MCS, with room) */
#define SEND_BUF (64 * 1024)
#define RCVBUF_BYTES (8 * 1024 * 1024)
#define DEFAULT_FREQ 2412
#define NAME_MAX_ 64
#define NL_BUF 8192		/* set-up requests and answers */
#define RECV_BUF (64 * 1024)
#define RECV_BATCH 64		/* messages read before the sends are flushed */

enum { DOWN, UP, NDIRS };
enum { SETUP, RUN, NPHASES };
static const char *const dir_names[NDIRS] = { "down", "up" };

struct radio {
	char name[NAME_MAX_];
	uint8_t addr[ETH_ALEN_];
	uint8_t aliases[MAX_ALIASES][ETH_ALEN_];
	unsigned int n_aliases;
	int id;
	unsigned int queued;	/* its frames waiting for or on the air */
};

struct counters {
	uint64_t offered;	/* unicast frames handed to the medium */
	uint64_t queue_drops;	/* never on the air: the radio's queue was full */
	uint64_t attempts;
	uint64_t attempts_lost;
	uint64_t delivered;
	uint64_t lost;		/* after the last allowed attempt */
	uint64_t airtime_ns;
	uint64_t per_frame[HIST_MAX + 1];	/* frames by attempts used */
	uint32_t rate_kbps[RATES_SEEN];		/* attempts by PHY rate: what rate control chose */
	uint64_t rate_attempts[RATES_SEEN];
	uint64_t group_frames;	/* broadcast/multicast: one attempt, per receiver */
	uint64_t group_deliveries;
	uint64_t group_losses;
};

struct pending {
	uint64_t done_ns;
	unsigned int tx;
	struct hwsim_frame_msg msg;	/* msg.frame points at frame[] */
	uint8_t frame[FRAME_MAX_BYTES];
	struct tx_rate_entry reported[TX_MAX_RATES];
	bool acked;
	int rx_rate_idx;
	uint8_t n_rx;
	uint8_t rx[MAX_RADIOS];
};

struct medium {
	struct mnl_socket *nl;
	uint16_t family;
	uint32_t seq;
	struct radio radios[MAX_RADIOS];
	unsigned int n_radios;
	struct lm_params model[NDIRS];
	char model_spec[NDIRS][256];
	struct lm_state chan[MAX_RADIOS][MAX_RADIOS];
	unsigned int max_attempts;
	unsigned int queue_limit[NDIRS];
	int32_t signal_dbm;
	bool running;		/* loss models on */
	uint64_t start_ns;
	uint64_t busy_until_ns;
	uint64_t busy_ns;
	uint64_t born_ns;
	struct pending *pool;
	unsigned int head, count;
	struct counters c[NPHASES][NDIRS];
	uint64_t rejects[HWSIM_REJECT_COUNT];
	uint64_t foreign, no_receiver, overruns, send_errors, kernel_errors, dumps;
	int last_kernel_error;
	const char *stats_path;
	char sendbuf[SEND_BUF];
	size_t sendlen;
	char stdin_line[128];
	size_t stdin_len;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, const char *value, const char *problem)
{
	fprintf(stderr, "airtcp-medium: %s = '%s': %s\n", what, value, problem);
	exit(2);
}

static void die_errno(const char *what)
{
	fprintf(stderr, "airtcp-medium: %s: %s\n", what, strerror(errno));
	exit(1);
}

static bool mac_eq(const uint8_t *a, const uint8_t *b)
{
	return !memcmp(a, b, ETH_ALEN_);
}

static int parse_mac(const char *text, uint8_t out[ETH_ALEN_])
{
	unsigned int b[ETH_ALEN_];
	char tail;
	int i;

	if (sscanf(text, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
		return -1;
	for (i = 0; i < ETH_ALEN_; i++)
		out[i] = (uint8_t)b[i];
	/* A radio's own address: unicast, not all zero. */
	return (out[0] & 1) || !(out[0] | out[1] | out[2] | out[3] | out[4] | out[5]) ? -1 : 0;
}

static int radio_by_addr(const struct medium *m, const uint8_t *addr)
{
	unsigned int i, j;

	for (i = 0; i < m->n_radios; i++) {
		if (mac_eq(m->radios[i].addr, addr))
			return (int)i;
		for (j = 0; j < m->radios[i].n_aliases; j++)
			if (mac_eq(m->radios[i].aliases[j], addr))
				return (int)i;
	}
	return -1;
}

/* ---------------------------------------------------------------- netlink */

static void flush(struct medium *m)
{
	if (!m->sendlen)
		return;
	if (mnl_socket_sendto(m->nl, m->sendbuf, m->sendlen) < 0)
		m->send_errors++;
	m->sendlen = 0;
}

/* Room for one more message in the send batch (flushing if needed). */
static void *send_slot(struct medium *m, size_t need)
{
	if (m->sendlen + need > sizeof(m->sendbuf))
		flush(m);
	return m->sendbuf + m->sendlen;
}

static void queue_tx_info(struct medium *m, const struct hwsim_frame_msg *f,
			  const struct tx_rate_entry reported[TX_MAX_RATES], bool acked)
{
	void *slot = send_slot(m, 256);
	size_t len = hwsim_build_tx_info(slot, sizeof(m->sendbuf) - m->sendlen, m->family, ++m->seq, f, reported,
					 acked, m->signal_dbm);

	if (!len)
		m->send_errors++;
	m->sendlen += MNL_ALIGN(len);
}

static void queue_frame(struct medium *m, const struct pending *p, unsigned int rx)
{
	void *slot = send_slot(m, p->msg.frame_len + 256);
	size_t len = hwsim_build_frame(slot, sizeof(m->sendbuf) - m->sendlen, m->family, ++m->seq,
				       m->radios[rx].addr, p->msg.frame, p->msg.frame_len, (uint32_t)p->rx_rate_idx,
				       m->signal_dbm, p->msg.freq_mhz);

	if (!len)
		m->send_errors++;
	m->sendlen += MNL_ALIGN(len);
}

/* Send one request and wait for its answer (set-up only). */
static int request(struct medium *m, void *buf, size_t len)
{
	char reply[NL_BUF];
	uint32_t seq = ((struct nlmsghdr *)buf)->nlmsg_seq;
	struct hwsim_msg msg;
	size_t used;
	ssize_t n;

	if (!len || mnl_socket_sendto(m->nl, buf, len) < 0)
		die_errno("sending a request to mac80211_hwsim");
	for (;;) {
		n = mnl_socket_recvfrom(m->nl, reply, sizeof(reply));
		if (n < 0)
			die_errno("reading mac80211_hwsim's answer");
		for (size_t off = 0; off < (size_t)n; off += used) {
			if (hwsim_parse(reply + off, (size_t)n - off, m->family, &msg, &used) != HWSIM_OK || !used) {
				if (!used)
					break;
				continue;
			}
			if (msg.kind == HWSIM_MSG_ERROR && msg.seq == seq)
				return msg.error;
		}
	}
}

static void resolve_family(struct medium *m)
{
	char buf[NL_BUF];
	size_t len = hwsim_build_getfamily(buf, sizeof(buf), ++m->seq);
	ssize_t n;

	if (mnl_socket_sendto(m->nl, buf, len) < 0)
		die_errno("asking for the MAC80211_HWSIM family");
	n = mnl_socket_recvfrom(m->nl, buf, sizeof(buf));
	if (n < 0)
		die_errno("reading the family");
	m->family = hwsim_parse_family_reply(buf, (size_t)n);
	if (!m->family) {
		fprintf(stderr, "airtcp-medium: no MAC80211_HWSIM netlink family: modprobe mac80211_hwsim radios=0\n");
		exit(1);
	}
	/* the ack that follows the answer */
	if (mnl_socket_recvfrom(m->nl, buf, sizeof(buf)) < 0)
		die_errno("reading the family ack");
}

static void setup_netlink(struct medium *m)
{
	char buf[NL_BUF];
	int size = RCVBUF_BYTES, rc;
	unsigned int i;

	m->nl = mnl_socket_open(NETLINK_GENERIC);
	if (!m->nl)
		die_errno("netlink socket");
	if (mnl_socket_bind(m->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		die_errno("netlink bind");
	/* Bursts of frames must not overrun us: FORCE ignores rmem_max (root). */
	if (setsockopt(mnl_socket_get_fd(m->nl), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(mnl_socket_get_fd(m->nl), SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	size = 1;
	mnl_socket_setsockopt(m->nl, NETLINK_EXT_ACK, &size, sizeof(size));
	resolve_family(m);
	rc = request(m, buf, hwsim_build_register(buf, sizeof(buf), m->family, ++m->seq));
	if (rc == -EBUSY) {
		fprintf(stderr, "airtcp-medium: another medium is registered in this network namespace\n");
		exit(1);
	}
	if (rc < 0) {
		errno = -rc;
		die_errno("HWSIM_CMD_REGISTER");
	}
	for (i = 0; i < m->n_radios; i++) {
		struct radio *r = &m->radios[i];

		rc = request(m, buf, hwsim_build_new_radio(buf, sizeof(buf), m->family, ++m->seq, r->name, r->addr));
		if (rc < 0) {
			fprintf(stderr, "airtcp-medium: creating radio %s: %s\n", r->name, strerror(-rc));
			exit(1);
		}
		r->id = rc;
	}
}

/* ---------------------------------------------------------------- the air */

static struct pending *pool_at(struct medium *m, unsigned int i)
{
	return &m->pool[(m->head + i) % POOL_FRAMES];
}

static void refuse(struct medium *m, const struct hwsim_frame_msg *f)
{
	static const struct tx_rate_entry never[TX_MAX_RATES] = { { -1, 0 }, { -1, 0 }, { -1, 0 }, { -1, 0 } };

	queue_tx_info(m, f, never, false);
}

static void start_channels(struct medium *m, uint64_t at_ns)
{
	unsigned int tx, rx;

	m->running = true;
	m->start_ns = at_ns;
	for (tx = 0; tx < MAX_RADIOS; tx++)
		for (rx = 0; rx < MAX_RADIOS; rx++)
			lm_init(&m->chan[tx][rx], &m->model[tx ? UP : DOWN], at_ns, tx * MAX_RADIOS + rx + 1);
}

/* The attempts of a frame by the PHY rate each was sent at. */
static void count_rates(struct counters *c, const struct frame_in *in, const struct frame_fate *fate)
{
	unsigned int i, k;

	for (i = 0; i < TX_MAX_RATES; i++) {
		const struct tx_rate_entry *e = &fate->reported[i];
		struct phy_rate rate;
		uint32_t kbps;

		if (e->idx < 0 || !e->count || phy_rate_from_hwsim(in->freq_mhz, e->idx, in->rate_flags[i], &rate))
			continue;
		kbps = phy_rate_kbps(&rate);
		for (k = 0; k < RATES_SEEN && c->rate_kbps[k] && c->rate_kbps[k] != kbps; k++)
			;
		if (k == RATES_SEEN)
			continue;
		c->rate_kbps[k] = kbps;
		c->rate_attempts[k] += e->count;
	}
}

static void on_frame(struct medium *m, const struct hwsim_frame_msg *f, uint64_t now)
{
	int tx = radio_by_addr(m, f->transmitter), rx;
	const uint8_t *ra = f->frame + 4;	/* addr1: the receiver */
	bool group = ra[0] & 1, lossy;
	unsigned int dir, i;
	struct frame_in in = { 0 };
	struct frame_fate fate;
	struct counters *c;
	struct pending *p;
	uint64_t start;

	if (tx < 0) {
		m->foreign++;	/* another group's radio: not ours to carry */
		refuse(m, f);
		return;
	}
	dir = tx ? UP : DOWN;
	start = now > m->busy_until_ns ? now : m->busy_until_ns;
	lossy = m->running && start >= m->start_ns;
	c = &m->c[lossy ? RUN : SETUP][dir];
	if (!group)
		c->offered++;
	if (m->radios[tx].queued >= m->queue_limit[dir] || m->count >= POOL_FRAMES) {
		if (!group)
			c->queue_drops++;
		refuse(m, f);
		return;
	}
	in.freq_mhz = f->freq_mhz ? f->freq_mhz : DEFAULT_FREQ;
	in.bytes = f->frame_len;
	in.no_ack = group || (f->flags & HWSIM_TX_CTL_NO_ACK);
	memcpy(in.rates, f->rates, sizeof(in.rates));
	memcpy(in.rate_flags, f->rate_flags, sizeof(in.rate_flags));

	p = pool_at(m, m->count);
	memset(p->rx, 0, sizeof(p->rx));
	p->n_rx = 0;
	if (group) {
		/* One transmission; each receiver's link decides for itself. */
		decide_frame(&in, start, m->max_attempts, NULL, NULL, false, &fate);
		fate.delivered = !fate.bad_chain;
		c->group_frames++;
		for (i = 0; i < m->n_radios && fate.delivered; i++) {
			if ((int)i == tx)
				continue;
			if (lossy && lm_attempt_lost(&m->chan[tx][i], &m->model[dir], start, in.bytes + FCS_BYTES)) {
				c->group_losses++;
				continue;
			}
			c->group_deliveries++;
			p->rx[p->n_rx++] = (uint8_t)i;
		}
		/* A group frame has no ACK; the attempt was made. */
		fate.attempts_lost = 0;
	} else {
		rx = radio_by_addr(m, ra);
		if (rx == tx)
			rx = -1;
		if (rx < 0)
			m->no_receiver++;
		decide_frame(&in, start, m->max_attempts, rx >= 0 ? &m->chan[tx][rx] : NULL, &m->model[dir], lossy,
			     &fate);
		c->attempts += fate.attempts;
		c->attempts_lost += fate.attempts_lost;
		if (fate.delivered) {
			c->delivered++;
			p->rx[p->n_rx++] = (uint8_t)rx;
		} else {
			c->lost++;
		}
		c->per_frame[fate.attempts < HIST_MAX ? fate.attempts : HIST_MAX]++;
		count_rates(c, &in, &fate);
	}
	c->airtime_ns += fate.airtime_ns;
	m->busy_ns += fate.airtime_ns;
	m->busy_until_ns = fate.end_ns;

	p->done_ns = fate.end_ns;
	p->tx = (unsigned int)tx;
	p->msg = *f;
	memcpy(p->frame, f->frame, f->frame_len);
	p->msg.frame = p->frame;
	p->msg.freq_mhz = in.freq_mhz;
	memcpy(p->reported, fate.reported, sizeof(p->reported));
	p->acked = fate.delivered && !in.no_ack;
	p->rx_rate_idx = fate.rx_rate_idx;
	m->count++;
	m->radios[tx].queued++;
}

/* Frames whose last attempt has ended: deliver and report. */
static void complete_due(struct medium *m, uint64_t now)
{
	unsigned int i;

	while (m->count) {
		struct pending *p = pool_at(m, 0);

		if (p->done_ns > now)
			break;
		for (i = 0; i < p->n_rx; i++)
			queue_frame(m, p, p->rx[i]);
		queue_tx_info(m, &p->msg, p->reported, p->acked);
		m->radios[p->tx].queued--;
		m->head = (m->head + 1) % POOL_FRAMES;
		m->count--;
	}
	flush(m);
}

static void arm_timer(struct medium *m, int tfd)
{
	struct itimerspec its = { 0 };
	uint64_t at;

	if (m->count) {
		at = pool_at(m, 0)->done_ns;
		its.it_value.tv_sec = (time_t)(at / 1000000000ULL);
		its.it_value.tv_nsec = (long)(at % 1000000000ULL);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void on_message(struct medium *m, const struct hwsim_msg *msg, uint64_t now)
{
	struct radio *radio;
	unsigned int j;
	int r;

	switch (msg->kind) {
	case HWSIM_MSG_FRAME:
		on_frame(m, &msg->frame, now);
		break;
	case HWSIM_MSG_ADD_MAC:
	case HWSIM_MSG_DEL_MAC:
		r = radio_by_addr(m, msg->mac_transmitter);
		if (r < 0)
			break;
		radio = &m->radios[r];
		for (j = 0; j < radio->n_aliases; j++)
			if (mac_eq(radio->aliases[j], msg->mac_receiver))
				break;
		if (msg->kind == HWSIM_MSG_ADD_MAC && j == radio->n_aliases && j < MAX_ALIASES)
			memcpy(radio->aliases[radio->n_aliases++], msg->mac_receiver, ETH_ALEN_);
		if (msg->kind == HWSIM_MSG_DEL_MAC && j < radio->n_aliases)
			memcpy(radio->aliases[j], radio->aliases[--radio->n_aliases], ETH_ALEN_);
		break;
	case HWSIM_MSG_ERROR:
		if (msg->error < 0) {
			/* e.g. EINVAL: the receiving radio is down or off channel */
			m->kernel_errors++;
			m->last_kernel_error = msg->error;
		}
		break;
	case HWSIM_MSG_DONE:
	default:
		break;
	}
}

static void on_netlink(struct medium *m)
{
	static char buf[RECV_BUF];
	struct hwsim_msg msg;
	enum hwsim_reject why;
	size_t off, used;
	ssize_t n;
	int batch;

	for (batch = 0; batch < RECV_BATCH; batch++) {
		n = recv(mnl_socket_get_fd(m->nl), buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == ENOBUFS)
				m->overruns++;	/* the kernel dropped messages for us: count, go on */
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			continue;
		}
		for (off = 0; off < (size_t)n; off += used) {
			why = hwsim_parse(buf + off, (size_t)n - off, m->family, &msg, &used);
			if (why == HWSIM_OK) {
				on_message(m, &msg, now_ns());
			} else {
				m->rejects[why]++;
				if (msg.kind == HWSIM_MSG_FRAME && msg.has_cookie)
					refuse(m, &msg.frame);	/* else it waits in hwsim's queue forever */
			}
			if (!used)
				break;
		}
	}
	flush(m);
}

/* ---------------------------------------------------------------- stats */

static void write_counters(FILE *f, const struct counters *c)
{
	unsigned int i;

	fprintf(f, "{\"offered\": %" PRIu64 ", \"queue_drops\": %" PRIu64 ", \"attempts\": %" PRIu64
		", \"attempts_lost\": %" PRIu64 ", \"delivered\": %" PRIu64 ", \"lost\": %" PRIu64
		", \"airtime_ns\": %" PRIu64 ", \"attempts_per_frame\": [",
		c->offered, c->queue_drops, c->attempts, c->attempts_lost, c->delivered, c->lost, c->airtime_ns);
	for (i = 1; i <= HIST_MAX; i++)
		fprintf(f, "%s%" PRIu64, i > 1 ? ", " : "", c->per_frame[i]);
	fprintf(f, "], \"attempts_by_rate_kbps\": {");
	for (i = 0; i < RATES_SEEN && c->rate_kbps[i]; i++)
		fprintf(f, "%s\"%u\": %" PRIu64, i ? ", " : "", c->rate_kbps[i], c->rate_attempts[i]);
	fprintf(f, "}, \"group\": {\"frames\": %" PRIu64 ", \"deliveries\": %" PRIu64 ", \"losses\": %" PRIu64 "}}",
		c->group_frames, c->group_deliveries, c->group_losses);
}

static void write_json(const struct medium *m, FILE *f)
{
	struct rusage ru;
	unsigned int i, d, ph, tx, rx;
	uint64_t now = now_ns();
	bool first = true;

	getrusage(RUSAGE_SELF, &ru);
	fprintf(f, "{\"version\": 1, \"dumps\": %" PRIu64 ", \"running\": %s, \"start_ns\": %" PRIu64
		", \"now_ns\": %" PRIu64 ", \"max_attempts\": %u, \"queue_limit\": {\"down\": %u, \"up\": %u}"
		", \"loss\": {", m->dumps, m->running ? "true" : "false", m->start_ns, now, m->max_attempts,
		m->queue_limit[DOWN], m->queue_limit[UP]);
	for (d = 0; d < NDIRS; d++)
		fprintf(f, "%s\"%s\": \"%s\"", d ? ", " : "", dir_names[d], m->model_spec[d]);
	fprintf(f, "}, \"radios\": [");
	for (i = 0; i < m->n_radios; i++)
		fprintf(f, "%s{\"name\": \"%s\", \"id\": %d, \"queued\": %u}", i ? ", " : "", m->radios[i].name,
			m->radios[i].id, m->radios[i].queued);
	fprintf(f, "]");
	for (ph = 0; ph < NPHASES; ph++) {
		fprintf(f, ", \"%s\": {", ph == RUN ? "run" : "setup");
		for (d = 0; d < NDIRS; d++) {
			fprintf(f, "%s\"%s\": ", d ? ", " : "", dir_names[d]);
			write_counters(f, &m->c[ph][d]);
		}
		fprintf(f, "}");
	}
	fprintf(f, ", \"channels\": [");
	for (tx = 0; tx < m->n_radios; tx++) {
		for (rx = 0; rx < m->n_radios; rx++) {
			if (tx == rx)
				continue;
			fprintf(f, "%s{\"tx\": %u, \"rx\": %u, \"switches\": %" PRIu64 ", \"resyncs\": %" PRIu64 "}",
				first ? "" : ", ", tx, rx, m->chan[tx][rx].switches, m->chan[tx][rx].resyncs);
			first = false;
		}
	}
	fprintf(f, "], \"rejects\": {");
	for (i = 1; i < HWSIM_REJECT_COUNT; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i > 1 ? ", " : "", hwsim_reject_names[i], m->rejects[i]);
	fprintf(f, "}, \"foreign_frames\": %" PRIu64 ", \"no_receiver\": %" PRIu64 ", \"overruns\": %" PRIu64
		", \"send_errors\": %" PRIu64 ", \"kernel_errors\": %" PRIu64 ", \"last_kernel_error\": %d"
		", \"busy_ns\": %" PRIu64 ", \"cpu\": {\"user_s\": %.3f, \"sys_s\": %.3f, \"wall_s\": %.3f}}\n",
		m->foreign, m->no_receiver, m->overruns, m->send_errors, m->kernel_errors, m->last_kernel_error,
		m->busy_ns, (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		(double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, (double)(now - m->born_ns) / 1e9);
}

static void dump_stats(struct medium *m)
{
	char tmp[4096];
	FILE *f;

	m->dumps++;
	if (!m->stats_path) {
		write_json(m, stdout);
		fflush(stdout);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", m->stats_path);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "airtcp-medium: %s: %s\n", tmp, strerror(errno));
		return;
	}
	write_json(m, f);
	/* renamed whole: a reader never sees half a file */
	if (fclose(f) || rename(tmp, m->stats_path))
		fprintf(stderr, "airtcp-medium: %s: %s\n", m->stats_path, strerror(errno));
}

/* ---------------------------------------------------------------- control */

static int parse_start(const char *text, uint64_t *at)
{
	char *end;

	if (!strcmp(text, "now")) {
		*at = now_ns();
		return 0;
	}
	errno = 0;
	*at = strtoull(text, &end, 10);
	return (*text >= '0' && *text <= '9' && !*end && !errno) ? 0 : -1;
}

static void on_stdin(struct medium *m, int *fd)
{
	char buf[256];
	ssize_t n = read(*fd, buf, sizeof(buf));
	ssize_t i;

	if (n <= 0) {
		*fd = -1;	/* closed: no more commands */
		return;
	}
	for (i = 0; i < n; i++) {
		uint64_t at;

		if (buf[i] != '\n') {
			if (m->stdin_len < sizeof(m->stdin_line) - 1)
				m->stdin_line[m->stdin_len++] = buf[i];
			continue;
		}
		m->stdin_line[m->stdin_len] = '\0';
		m->stdin_len = 0;
		if (!strncmp(m->stdin_line, "start ", 6) && !parse_start(m->stdin_line + 6, &at))
			start_channels(m, at);
		else if (!strcmp(m->stdin_line, "stats"))
			dump_stats(m);
		else
			fprintf(stderr, "airtcp-medium: stdin: unknown command '%s' (start NS|now, stats)\n",
				m->stdin_line);
	}
}

static void print_ready(const struct medium *m)
{
	unsigned int i;

	printf("{\"ready\": true, \"family\": %u, \"radios\": [", m->family);
	for (i = 0; i < m->n_radios; i++) {
		const uint8_t *a = m->radios[i].addr;

		printf("%s{\"name\": \"%s\", \"id\": %d, \"addr\": \"%02x:%02x:%02x:%02x:%02x:%02x\"}", i ? ", " : "",
		       m->radios[i].name, m->radios[i].id, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
	printf("]}\n");
	fflush(stdout);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: airtcp-medium --radio NAME=MAC [--radio NAME=MAC ...] [--loss down|up:SPEC]\n"
		   "                     [--max-attempts N] [--queue [down:|up:]FRAMES] [--stats FILE]\n"
		   "                     [--start-at now|wait|NS] [--signal DBM] [--check]\n"
		   "  SPEC: model=uniform,p=0.03 | model=gilbert-elliott,p_g=..,p_b=..,p_gg=..,p_bb=..\n"
		   "        | model=exponential-bytes,mean_bytes=N | model=time-markov,good_mean=100ms,\n"
		   "          bad_mean=5ms[,holding=exponential|deterministic][,loss_good=P][,loss_bad=P]\n"
		   "          [,seed=N][,first_good=T] | model=none\n");
}

static unsigned int parse_uint(const char *opt, const char *text, unsigned int lo, unsigned int hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (*text < '0' || *text > '9' || *end || errno || v < lo || v > hi) {
		char range[64];

		snprintf(range, sizeof(range), "expected an integer from %u to %u", lo, hi);
		die(opt, text, range);
	}
	return (unsigned int)v;
}

static void print_check(const struct medium *m, bool wait_start)
{
	static const char *const kinds[] = { "none", "uniform", "gilbert-elliott", "exponential-bytes", "time-markov" };
	unsigned int i, d;

	printf("{\"radios\": [");
	for (i = 0; i < m->n_radios; i++)
		printf("%s\"%s\"", i ? ", " : "", m->radios[i].name);
	printf("], \"max_attempts\": %u, \"wait_start\": %s", m->max_attempts, wait_start ? "true" : "false");
	for (d = 0; d < NDIRS; d++) {
		const struct lm_params *p = &m->model[d];

		printf(", \"%s\": {\"model\": \"%s\", \"queue\": %u, \"expected_loss_1538\": %.9g, "
		       "\"seed\": %" PRIu64 ", \"deterministic\": %s}",
		       dir_names[d], kinds[p->kind], m->queue_limit[d], lm_expected_loss(p, 1538), p->seed,
		       p->deterministic ? "true" : "false");
	}
	printf("}\n");
}

static void parse_args(struct medium *m, int argc, char **argv, bool *wait_start, uint64_t *start_at)
{
	bool check = false;

	char err[320];
	int i, d;

	for (d = 0; d < NDIRS; d++)
		strcpy(m->model_spec[d], "model=none");
	for (i = 1; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
			usage(stdout);
			exit(0);
		}
		if (!strcmp(opt, "--check")) {
			check = true;
			continue;
		}
		if (!val)
			die(opt, "", "missing value");
		i++;
		if (!strcmp(opt, "--radio")) {
			const char *eq = strchr(val, '=');
			struct radio *r = &m->radios[m->n_radios];

			if (m->n_radios >= MAX_RADIOS)
				die(opt, val, "too many radios (at most 8)");
			if (!eq || eq == val || (size_t)(eq - val) >= sizeof(r->name) || parse_mac(eq + 1, r->addr))
				die(opt, val, "expected NAME=MAC with a unicast MAC address, NAME shorter than 64");
			memcpy(r->name, val, (size_t)(eq - val));
			if (radio_by_addr(m, r->addr) >= 0)
				die(opt, val, "two radios with one address");
			m->n_radios++;
		} else if (!strcmp(opt, "--loss")) {
			d = !strncmp(val, "down:", 5) ? DOWN : !strncmp(val, "up:", 3) ? UP : -1;
			if (d < 0)
				die(opt, val, "expected down:SPEC or up:SPEC");
			if (lm_parse(strchr(val, ':') + 1, &m->model[d], err, sizeof(err)))
				die(opt, val, err);
			snprintf(m->model_spec[d], sizeof(m->model_spec[d]), "%s", strchr(val, ':') + 1);
		} else if (!strcmp(opt, "--max-attempts")) {
			m->max_attempts = parse_uint(opt, val, 1, 32);
		} else if (!strcmp(opt, "--queue")) {
			d = !strncmp(val, "down:", 5) ? DOWN : !strncmp(val, "up:", 3) ? UP : -1;
			if (d < 0) {
				m->queue_limit[DOWN] = parse_uint(opt, val, 1, QUEUE_MAX);
				m->queue_limit[UP] = m->queue_limit[DOWN];
			} else {
				m->queue_limit[d] = parse_uint(opt, strchr(val, ':') + 1, 1, QUEUE_MAX);
			}
		} else if (!strcmp(opt, "--signal")) {
			m->signal_dbm = -(int32_t)parse_uint(opt, val[0] == '-' ? val + 1 : val, 0, 120);
		} else if (!strcmp(opt, "--stats")) {
			m->stats_path = val;
		} else if (!strcmp(opt, "--start-at")) {
			*wait_start = !strcmp(val, "wait");
			if (!*wait_start && parse_start(val, start_at))
				die(opt, val, "expected now, wait or a CLOCK_MONOTONIC time in ns");
		} else {
			usage(stderr);
			die("option", opt, "unknown");
		}
	}
	if (m->n_radios < 2)
		die("--radio", "", "give at least two radios (the access point first)");
	if (check) {
		print_check(m, *wait_start);
		exit(0);
	}
}

int main(int argc, char **argv)
{
	static struct medium m = { .queue_limit = { QUEUE_DEFAULT, QUEUE_DEFAULT }, .signal_dbm = -50 };
	bool wait_start = false, stop = false;
	uint64_t start_at = 0;
	struct pollfd fds[4];
	sigset_t mask;
	int tfd, sfd, in_fd = STDIN_FILENO;

	parse_args(&m, argc, argv, &wait_start, &start_at);
	m.born_ns = now_ns();
	m.pool = calloc(POOL_FRAMES, sizeof(*m.pool));
	if (!m.pool)
		die_errno("memory for the frame pool");
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (sfd < 0 || tfd < 0)
		die_errno("signalfd/timerfd");
	setup_netlink(&m);
	if (!wait_start)
		start_channels(&m, start_at ? start_at : now_ns());
	print_ready(&m);

	while (!stop) {
		fds[0] = (struct pollfd){ .fd = mnl_socket_get_fd(m.nl), .events = POLLIN };
		fds[1] = (struct pollfd){ .fd = tfd, .events = POLLIN };
		fds[2] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		fds[3] = (struct pollfd){ .fd = in_fd, .events = POLLIN };
		if (poll(fds, in_fd >= 0 ? 4 : 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			die_errno("poll");
		}
		if (fds[2].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGUSR1)
					dump_stats(&m);
				else
					stop = true;
			}
		}
		if (fds[0].revents & POLLIN)
			on_netlink(&m);
		if (fds[1].revents & POLLIN) {
			uint64_t expirations;

			if (read(tfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
				die_errno("timerfd");
		}
		if (in_fd >= 0 && (fds[3].revents & (POLLIN | POLLHUP)))
			on_stdin(&m, &in_fd);
		complete_due(&m, now_ns());
		arm_timer(&m, tfd);
	}
	dump_stats(&m);
	mnl_socket_close(m.nl);	/* hwsim destroys our radios */
	free(m.pool);
	return 0;
}
