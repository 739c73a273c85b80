// SPDX-License-Identifier: GPL-2.0-only
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "nfq.h"

#define NL_CONFIG_BUF 8192	/* config messages are small */
/* one datagram: a packet message with up to a whole packet (or a cut one, and its attributes) */
#define RX_SLOT_MAX (0xffff + MNL_SOCKET_BUFFER_SIZE)
#define RX_SLOT_CUT (4096 + MNL_SOCKET_BUFFER_SIZE)
/* datagrams one recvmmsg takes at most: fewer when each may hold a whole 64 KiB packet */
#define RX_BATCH_FULL 16
#define RX_BATCH_CUT 64
/* a verdict message: headers, the verdict, and at most a whole packet */
#define VERDICT_MSG_MAX (MNL_ALIGN(sizeof(struct nlmsghdr)) + MNL_ALIGN(sizeof(struct nfgenmsg)) + \
			 MNL_ATTR_HDRLEN + MNL_ALIGN(sizeof(struct nfqnl_msg_verdict_hdr)) + MNL_ATTR_HDRLEN + \
			 MNL_ALIGN(0xffff))
#define TX_BUF_SIZE (64 * 1024 + 2 * VERDICT_MSG_MAX)	/* what one send carries, at most */

/* ---------------------------------------------------------------- set-up */

void nfqueue_init(struct nfqueue *q)
{
	memset(q, 0, sizeof(*q));
}

static int nl_send(struct nfqueue *q, struct nlmsghdr *nlh)
{
	return mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) < 0 ? -1 : 0;
}

static int configure(struct nfqueue *q, const struct nfqueue_params *p, char *err, size_t errlen)
{
	char buf[NL_CONFIG_BUF];
	struct nlmsghdr *nlh;
	uint32_t flags = 0, mask = NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO;
	int one = 1, size = (int)p->socket_buffer;

	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, p->queue);
	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
	if (nl_send(q, nlh) < 0) {
		snprintf(err, errlen, "binding NFQUEUE %u: %s%s", p->queue, strerror(errno),
			 errno == EBUSY ? " (another program holds this queue)" : "");
		return -1;
	}
	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, p->queue);
	nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, (int)q->copy_range);
	nfq_nlmsg_cfg_put_qmaxlen(nlh, p->maxlen);
	if (p->fail_open)
		flags |= NFQA_CFG_F_FAIL_OPEN;
	if (p->gso)
		flags |= NFQA_CFG_F_GSO;
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(flags));
	mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(mask));
	if (nl_send(q, nlh) < 0) {
		snprintf(err, errlen, "configuring NFQUEUE %u: %s", p->queue, strerror(errno));
		return -1;
	}
	/* A full socket must not stall us: with fail-open the kernel accepts instead. */
	mnl_socket_setsockopt(q->nl, NETLINK_NO_ENOBUFS, &one, sizeof(one));
	if (setsockopt(mnl_socket_get_fd(q->nl), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(mnl_socket_get_fd(q->nl), SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	return 0;
}

int nfqueue_open(struct nfqueue *q, const struct nfqueue_params *p, char *err, size_t errlen)
{
	int fl;

	q->queue = p->queue;
	q->copy_range = p->copy_range && p->copy_range < NFQUEUE_COPY_ALL ? p->copy_range : NFQUEUE_COPY_ALL;
	q->flush_bound = p->flush_bound ? p->flush_bound : 1;
	/* a cut copy never needs a 64 KiB slot */
	q->rxlen = q->copy_range < NFQUEUE_COPY_ALL ? RX_SLOT_CUT : RX_SLOT_MAX;
	q->rxslots = q->copy_range < NFQUEUE_COPY_ALL ? RX_BATCH_CUT : RX_BATCH_FULL;
	q->rxbuf = malloc(q->rxlen * q->rxslots);
	q->txbuf = malloc(TX_BUF_SIZE);
	if (!q->rxbuf || !q->txbuf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	q->txlen = 0;
	q->nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!q->nl || mnl_socket_bind(q->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "netlink socket: %s (needs CAP_NET_ADMIN)", strerror(errno));
		return -1;
	}
	q->portid = mnl_socket_get_portid(q->nl);
	if (configure(q, p, err, errlen) < 0)
		return -1;
	fl = fcntl(mnl_socket_get_fd(q->nl), F_GETFL);
	fcntl(mnl_socket_get_fd(q->nl), F_SETFL, fl | O_NONBLOCK);
	return 0;
}

size_t nfqueue_memory(void)
{
	return (size_t)RX_SLOT_MAX * RX_BATCH_FULL + TX_BUF_SIZE;
}

int nfqueue_fd(const struct nfqueue *q)
{
	return mnl_socket_get_fd(q->nl);
}

void nfqueue_close(struct nfqueue *q)
{
	if (q->nl) {
		char buf[NL_CONFIG_BUF];
		struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, q->queue);

		nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_UNBIND);
		nl_send(q, nlh);
		mnl_socket_close(q->nl);
		q->nl = NULL;
	}
	free(q->rxbuf);
	free(q->txbuf);
	q->rxbuf = q->txbuf = NULL;
}

/* ---------------------------------------------------------------- verdicts */

static struct nlmsghdr *verdict_put(struct nfqueue *q, int type, uint32_t id, int verdict)
{
	struct nlmsghdr *nlh = nfq_nlmsg_put(q->txbuf + q->txlen, type, q->queue);

	nfq_nlmsg_verdict_put(nlh, (int)id, verdict);
	return nlh;
}

/* The held run of plain accepts as one message: every packet up to accept_max still queued. */
static void write_accepts(struct nfqueue *q)
{
	struct nlmsghdr *nlh;

	if (!q->accept_pending)
		return;
	nlh = verdict_put(q, NFQNL_MSG_VERDICT_BATCH, q->accept_max, NF_ACCEPT);
	q->txlen += MNL_ALIGN(nlh->nlmsg_len);
	q->verdict_messages++;
	q->accept_pending = false;
}

void nfqueue_flush(struct nfqueue *q)
{
	write_accepts(q);
	if (q->txlen) {
		if (mnl_socket_sendto(q->nl, q->txbuf, q->txlen) < 0)
			q->netlink_errors++;
		q->verdict_sends++;
	}
	q->txlen = 0;
	q->held = 0;
}

/*
 * A verdict of its own message (not a batch accept): written after the held
 * accepts, since the kernel reinjects in the order pepd decided; with room
 * left for the accepts a later send ends with.
 */
static struct nlmsghdr *own_verdict_begin(struct nfqueue *q, uint32_t id, int verdict)
{
	if (q->txlen + 2 * VERDICT_MSG_MAX > TX_BUF_SIZE)
		nfqueue_flush(q);
	write_accepts(q);
	return verdict_put(q, NFQNL_MSG_VERDICT, id, verdict);
}

static void own_verdict_end(struct nfqueue *q, const struct nlmsghdr *nlh)
{
	q->txlen += MNL_ALIGN(nlh->nlmsg_len);
	q->verdict_messages++;
}

/* Every verdict, batched or not, counts towards the flush bound. */
static void verdict_held(struct nfqueue *q)
{
	if (++q->held >= q->flush_bound)
		nfqueue_flush(q);
}

void nfqueue_verdict(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v, const uint8_t *payload, uint32_t len)
{
	struct nlmsghdr *nlh;

	if (v == NFQUEUE_ACCEPT && !payload) {
		q->accept_pending = true;
		q->accept_max = id;
	} else {
		nlh = own_verdict_begin(q, id, v == NFQUEUE_ACCEPT ? NF_ACCEPT : NF_DROP);
		if (payload)
			nfq_nlmsg_verdict_put_pkt(nlh, payload, len);
		own_verdict_end(q, nlh);
	}
	verdict_held(q);
}

void nfqueue_verdict_mark(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v, uint32_t mark)
{
	struct nlmsghdr *nlh = own_verdict_begin(q, id, (int)v);

	mnl_attr_put_u32(nlh, NFQA_MARK, htonl(mark));
	own_verdict_end(q, nlh);
	verdict_held(q);
}

/* ---------------------------------------------------------------- the receive loop */

struct receive_ctx {
	struct nfqueue *q;
	nfqueue_packet_fn fn;
	void *ctx;
};

static uint32_t attr_u32(struct nlattr *const attr[], int type)
{
	return attr[type] ? ntohl(mnl_attr_get_u32(attr[type])) : 0;
}

static int packet_cb(const struct nlmsghdr *nlh, void *data)
{
	struct receive_ctx *rc = data;
	struct nfqueue *q = rc->q;
	struct nlattr *attr[NFQA_MAX + 1] = { NULL };
	const struct nfgenmsg *gen = mnl_nlmsg_get_payload(nlh);
	struct nfqnl_msg_packet_hdr *ph;
	struct nfqueue_packet pkt = { 0 };
	uint32_t info;

	if (nfq_nlmsg_parse(nlh, attr) < 0 || !attr[NFQA_PACKET_HDR]) {
		q->netlink_errors++;
		return MNL_CB_OK;
	}
	ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	pkt.id = ntohl(ph->packet_id);
	/* ids count every packet the queue saw: one skipped was accepted without us */
	if (q->have_id && pkt.id > q->last_id + 1)
		q->id_gaps += pkt.id - q->last_id - 1;
	/*
	 * The kernel's ids rise; one that does not (never seen from a kernel)
	 * must not fall under a batch accept held for earlier ones: send them.
	 */
	if (q->have_id && !nfqueue_id_after(pkt.id, q->last_id))
		nfqueue_flush(q);
	q->have_id = true;
	q->last_id = pkt.id;
	pkt.cap_len = attr_u32(attr, NFQA_CAP_LEN);
	pkt.hook = ph->hook;
	pkt.family = gen->nfgen_family;
	pkt.indev = attr_u32(attr, NFQA_IFINDEX_INDEV);
	pkt.outdev = attr_u32(attr, NFQA_IFINDEX_OUTDEV);
	pkt.physindev = attr_u32(attr, NFQA_IFINDEX_PHYSINDEV);
	pkt.physoutdev = attr_u32(attr, NFQA_IFINDEX_PHYSOUTDEV);
	pkt.mark = attr_u32(attr, NFQA_MARK);
	info = attr_u32(attr, NFQA_SKB_INFO);
	pkt.gso = info & NFQA_SKB_GSO;
	pkt.csum_not_ready = info & NFQA_SKB_CSUMNOTREADY;
	pkt.csum_not_verified = info & NFQA_SKB_CSUM_NOTVERIFIED;
	if (attr[NFQA_PAYLOAD]) {
		pkt.data = mnl_attr_get_payload(attr[NFQA_PAYLOAD]);
		pkt.len = mnl_attr_get_payload_len(attr[NFQA_PAYLOAD]);
	}
	rc->fn(rc->ctx, &pkt);
	return MNL_CB_OK;
}

bool nfqueue_datagram_valid(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		struct nlmsghdr h;
		size_t step;

		if (len < sizeof(h))
			return false;
		memcpy(&h, p, sizeof(h));
		if (h.nlmsg_len < sizeof(h) || h.nlmsg_len > len)
			return false;
		step = NLMSG_ALIGN(h.nlmsg_len);
		if (step >= len)
			return true;	/* the last one (its padding may be cut) */
		p += step;
		len -= step;
	}
	return true;
}

/* One datagram, as the kernel wrote it. */
static void receive_one(struct nfqueue *q, struct receive_ctx *rc, const char *buf, size_t n)
{
	if (!nfqueue_datagram_valid(buf, n)) {
		q->netlink_errors++;	/* refused whole: nothing in it is trusted */
		return;
	}
	if (mnl_cb_run(buf, n, 0, q->portid, packet_cb, rc) < 0)
		q->netlink_errors++;
}

/*
 * Up to q->rxslots datagrams with one recvmmsg: under load the syscall per
 * packet is most of what reading costs.  Returns how many, 0 when the
 * socket is empty, -1 on an error.
 */
static int receive_batch(struct nfqueue *q, unsigned int want, size_t *lens)
{
	struct mmsghdr msgs[RX_BATCH_CUT];
	struct iovec iov[RX_BATCH_CUT];
	unsigned int i, slots = want < q->rxslots ? want : q->rxslots;
	int n;

	for (i = 0; i < slots; i++) {
		iov[i].iov_base = q->rxbuf + i * q->rxlen;
		iov[i].iov_len = q->rxlen;
		memset(&msgs[i].msg_hdr, 0, sizeof(msgs[i].msg_hdr));
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	n = recvmmsg(mnl_socket_get_fd(q->nl), msgs, slots, MSG_DONTWAIT, NULL);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
	for (i = 0; i < (unsigned int)n; i++)
		lens[i] = msgs[i].msg_hdr.msg_flags & MSG_TRUNC ? 0 : msgs[i].msg_len;
	return n;
}

unsigned int nfqueue_receive(struct nfqueue *q, unsigned int max_messages, nfqueue_packet_fn fn, void *ctx)
{
	struct receive_ctx rc = { .q = q, .fn = fn, .ctx = ctx };
	size_t lens[RX_BATCH_CUT];
	unsigned int done = 0;
	ssize_t n;
	int got, i;

	if (mnl_socket_get_fd(q->nl) < 0) {
		/* a socket without a descriptor (the fuzzer's stub): one datagram at a time, through libmnl */
		for (; done < max_messages; done++) {
			n = mnl_socket_recvfrom(q->nl, q->rxbuf, q->rxlen);
			if (n < 0) {
				if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
					q->netlink_errors++;
				break;
			}
			receive_one(q, &rc, q->rxbuf, (size_t)n);
		}
		nfqueue_flush(q);
		return done;
	}
	while (done < max_messages) {
		got = receive_batch(q, max_messages - done, lens);
		if (got <= 0) {
			if (got < 0)
				q->netlink_errors++;
			break;
		}
		for (i = 0; i < got; i++) {
			if (!lens[i])
				q->netlink_errors++;	/* cut to its slot: cannot happen */
			else
				receive_one(q, &rc, q->rxbuf + (size_t)i * q->rxlen, lens[i]);
		}
		done += (unsigned int)got;
		if ((unsigned int)got < q->rxslots)
			break;	/* the socket is empty */
	}
	nfqueue_flush(q);
	return done;
}
