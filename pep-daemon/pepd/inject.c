// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "inject.h"

static int open_raw(int family, uint32_t mark, uint32_t priority)
{
	int one = 1, fd = socket(family, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_RAW);
	int prio = (int)priority;

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)) < 0)
		goto fail;
	if (priority && setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &prio, sizeof(prio)) < 0)
		goto fail;
	/* room for a full egress queue of our packets: EAGAIN would be a drop of our own making */
	int sndbuf = 8 << 20;

	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	/* report a full egress queue as ENOBUFS instead of hiding it */
	if (family == AF_INET && setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof(one)) < 0)
		goto fail;
	if (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof(one)) < 0)
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

static int open_pair(int *fd4, int *fd6, uint32_t mark, uint32_t priority, char *err, size_t errlen)
{
	*fd6 = -1;
	*fd4 = open_raw(AF_INET, mark, priority);
	if (*fd4 < 0) {
		snprintf(err, errlen, "raw IPv4 socket with SO_MARK%s: %s (needs CAP_NET_RAW and CAP_NET_ADMIN)",
			 priority ? " and SO_PRIORITY" : "", strerror(errno));
		return -1;
	}
	*fd6 = open_raw(AF_INET6, mark, priority);
	if (*fd6 < 0 && errno != EAFNOSUPPORT) {
		snprintf(err, errlen, "raw IPv6 socket with SO_MARK%s: %s", priority ? " and SO_PRIORITY" : "",
			 strerror(errno));
		close(*fd4);
		*fd4 = -1;
		return -1;
	}
	return 0;
}

int inject_open(struct injector *inj, uint32_t mark, uint32_t priority, char *err, size_t errlen)
{
	inj->rtx4 = inj->rtx6 = -1;
	if (open_pair(&inj->fd4, &inj->fd6, mark, 0, err, errlen) < 0)
		return -1;
	if (!priority) {
		inj->rtx4 = inj->fd4;
		inj->rtx6 = inj->fd6;
	} else if (open_pair(&inj->rtx4, &inj->rtx6, mark, priority, err, errlen) < 0) {
		inject_close(inj);
		return -1;
	}
	if (!inj->mtu)
		inj->mtu = 1500;
	return 0;
}

void inject_close(struct injector *inj)
{
	int *fds[] = { &inj->rtx4, &inj->rtx6, &inj->fd4, &inj->fd6 };
	unsigned int i;

	if (inj->rtx4 == inj->fd4)
		inj->rtx4 = inj->rtx6 = -1;	/* shared: closed once, below */
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

static int send_raw(int fd4, int fd6, const uint8_t *pkt, uint32_t len)
{
	ssize_t n;

	if (len < 20)
		return -EINVAL;
	if ((pkt[0] >> 4) == 4) {
		struct sockaddr_in sin = { .sin_family = AF_INET };

		memcpy(&sin.sin_addr, pkt + 16, 4);
		n = sendto(fd4, pkt, len, 0, (const struct sockaddr *)&sin, sizeof(sin));
	} else {
		struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };

		if (len < 40 || fd6 < 0)
			return -EAFNOSUPPORT;
		memcpy(&sin6.sin6_addr, pkt + 24, 16);
		n = sendto(fd6, pkt, len, 0, (const struct sockaddr *)&sin6, sizeof(sin6));
	}
	if (n < 0)
		return -errno;
	return 0;
}

int inject_packet(struct injector *inj, const uint8_t *pkt, uint32_t len)
{
	return send_raw(inj->fd4, inj->fd6, pkt, len);
}

struct slice_ctx {
	int fd4, fd6;
	unsigned int copies;
	int sent;
	int first_err;
};

static int send_slice(void *opaque, const uint8_t *pkt, uint32_t len)
{
	struct slice_ctx *c = opaque;
	unsigned int i;
	int r;

	for (i = 0; i < c->copies; i++) {
		r = send_raw(c->fd4, c->fd6, pkt, len);
		if (r < 0) {
			if (!c->first_err)
				c->first_err = r;
		} else {
			c->sent++;
		}
	}
	return 0;
}

int inject_segment(struct injector *inj, const struct flow *f, const struct seg *g, unsigned int copies,
		   bool repair)
{
	struct slice_ctx c = {
		.fd4 = repair ? inj->rtx4 : inj->fd4,
		.fd6 = repair ? inj->rtx6 : inj->fd6,
		.copies = copies,
	};
	uint32_t max_payload, tsval, from, to;
	struct pkt p;
	int r;

	if (pkt_parse(g->buf->data, g->buf->len, &p) != PKT_OK)
		return -EINVAL;	/* it parsed when it was cached: cannot happen */
	/* the segment's own bytes of the packet it was cut from (all of it, unless a GSO slice) */
	from = g->seq - p.seq;
	to = g->end - p.seq;
	if (to > p.payload_len)
		to = p.payload_len;	/* a FIN occupies a sequence number, not a byte */
	if (from > to || (from == to && p.payload_len))
		return -EINVAL;	/* the slice lies outside its packet: cannot happen */
	max_payload = build_slice_payload(inj->mtu, p.payload_off, f->conn.wh_mss, p.tcp_hlen - 20u);
	tsval = conn_repair_tsval(&f->conn, p.tsval, repair && inj->rtx4 != inj->fd4);
	r = build_slices_range(&p, from, to, max_payload, f->conn.fh_has_ts && p.has_ts ? &tsval : NULL, inj->buf,
			       sizeof(inj->buf), send_slice, &c);
	if (r == BUILD_TOO_MANY_SLICES)
		return -E2BIG;
	if (r < 0)
		return -EMSGSIZE;
	return c.first_err && !c.sent ? c.first_err : c.sent;
}

/* window: the raw window field, or -1 for the wireless host's latest */
int inject_ack(struct injector *inj, const struct flow *f, uint32_t ack, const struct sack_block *dsack, int32_t window)
{
	struct ack_template t = {
		.family = f->key.family,
		.sport = f->key.wh_port,
		.dport = f->key.fh_port,
		.seq = f->conn.wh_nxt,
		.window = window >= 0 ? (uint16_t)window : f->conn.wh_window,
		.has_ts = f->conn.wh_has_ts,
		.tsval = f->conn.wh_tsval,
		.tsecr = f->conn.wh_tsecr,
	};
	uint32_t len;

	if (!f->conn.wh_seen)
		return -EAGAIN;	/* nothing from the wireless host yet: no sequence number to use */
	memcpy(t.src, f->key.wh, sizeof(t.src));
	memcpy(t.dst, f->key.fh, sizeof(t.dst));
	if (dsack) {
		t.dsack_start = dsack->start;
		t.dsack_end = dsack->end;
	}
	len = build_ack(&t, ack, inj->buf);
	return inject_packet(inj, inj->buf, len);
}
