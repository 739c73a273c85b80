// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the NFQUEUE path end to end, a netlink message in,
 * verdicts out.  lib/nfq.c (set-up, receive loop, attribute parsing,
 * verdict batches) and pepd's per-packet entry (pepd_handle_packet: the
 * parser, the flow table, the filter, edited ACKs, raw sends) run as in the
 * daemon; only the netlink socket is replaced, at libmnl's socket calls
 * (mnl_socket_*, defined here: what the kernel would send is the input,
 * what pepd sends is captured).  pepd's raw sockets are closed (-1): every
 * send fails, as a full or missing route would, and nothing leaves.
 *
 * Byte 0: bits 0-1 the filter (passthrough, snoop, snoop+, pc); bit 2 the
 * input is raw netlink datagrams (each preceded by a 2-byte length) rather
 * than records; bit 3 gso; bit 4 forward = accept; bit 5 verdicts held up
 * to 64 (else each sent at once); bit 6 headers_only.  A record:
 *
 *   u8 flags   bit 0 no NFQA_PACKET_HDR;  bit 1 no NFQA_PAYLOAD;  bit 2
 *              NFQA_CAP_LEN (the packet was cut: only its first 64 bytes
 *              are given, as headers_only would);  bit 3 NFQA_SKB_INFO GSO;
 *              bit 4 a new datagram starts here;  bit 5 the packet id
 *              skips one (a packet the kernel accepted without pepd);
 *              bit 6 the checksums are left as they are (else made right,
 *              so that the packet reaches the filter)
 *   u8 devices bit 0 out through the wireless interface, bit 1 in through
 *              it (else another interface), bit 2 no indev, bit 3 no outdev
 *   u8 len     then len bytes of IP packet
 *
 * Promises: every packet the receive loop hands to pepd gets exactly one
 * verdict, carrying its id, on its queue, and nothing else is answered (a
 * batch verdict answers every packet given before it was sent whose id is
 * not after the batch's, and that has no verdict yet, as the kernel's
 * queue would); a packet the parser refuses is accepted unchanged; a cut
 * packet's verdict never carries bytes; a rewritten packet has the
 * original's IP length, parses, and keeps its addresses, ports, sequence
 * and acknowledgement numbers, flags and payload.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>

#include "csum.h"
#include "daemon.h"
#include "packet.h"

#include "promise.h"

#define QUEUE 7
#define WIRELESS_IFINDEX 1	/* lo: the one interface every namespace has */
#define MAX_DGRAMS 64
#define MAX_PKTS 512
#define DGRAM_MAX 65536

/* ---------------------------------------------------------------- the netlink socket, stubbed */

static struct {
	uint8_t *dgram[MAX_DGRAMS];
	size_t len[MAX_DGRAMS];
	int n, next;
	uint8_t *sent;		/* what pepd sent, concatenated */
	size_t sent_len, sent_cap;
} nl;

#include "../tests/mnl_stub.h"

ssize_t mnl_socket_recvfrom(const struct mnl_socket *s, void *buf, size_t size)
{
	size_t n;

	(void)s;
	if (nl.next == nl.n) {
		errno = EAGAIN;
		return -1;
	}
	n = nl.len[nl.next] < size ? nl.len[nl.next] : size;
	memcpy(buf, nl.dgram[nl.next], n);
	nl.next++;
	return (ssize_t)n;
}

ssize_t mnl_socket_sendto(const struct mnl_socket *s, const void *req, size_t size)
{
	(void)s;
	if (nl.sent_len + size > nl.sent_cap) {
		nl.sent_cap = (nl.sent_len + size) * 2;
		nl.sent = realloc(nl.sent, nl.sent_cap);
		PROMISE(nl.sent);
	}
	memcpy(nl.sent + nl.sent_len, req, size);
	nl.sent_len += size;
	return (ssize_t)size;
}

/* ---------------------------------------------------------------- what pepd was given */

static struct {
	uint32_t id;
	uint8_t *data;
	uint32_t len;
	int verdicts;
	bool parsed;
	bool cut;
	size_t given_at;	/* how much pepd had sent when it was given this packet */
} pk[MAX_PKTS];
static int npk;

static void record(void *queue, const struct nfqueue_packet *p)
{
	struct pkt parsed;

	/*
	 * Records stop at MAX_PKTS, and a raw message takes at least 20 bytes: inputs
	 * under 10 KB (libFuzzer's -max_len is 4096 here) cannot pass it.  Past it no
	 * verdict could be checked, so it is a broken promise, not a silent gap.
	 */
	PROMISE(npk < MAX_PKTS);
	pk[npk].id = p->id;
	pk[npk].len = p->data ? p->len : 0;
	pk[npk].data = malloc(pk[npk].len ? pk[npk].len : 1);
	PROMISE(pk[npk].data);
	if (p->data)
		memcpy(pk[npk].data, p->data, p->len);
	pk[npk].verdicts = 0;
	pk[npk].cut = p->cap_len && p->cap_len != p->len;
	pk[npk].given_at = nl.sent_len;
	if (pk[npk].cut) {
		bool short_copy;

		pk[npk].parsed = p->data && pkt_parse_headers(p->data, p->len, p->cap_len, &parsed, &short_copy) == PKT_OK;
	} else {
		pk[npk].parsed = p->data && pkt_parse(p->data, p->len, &parsed) == PKT_OK;
	}
	npk++;
	pepd_handle_packet(queue, p);
}

static int attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	uint16_t type = mnl_attr_get_type(a);

	if (type <= NFQA_MAX)
		tb[type] = a;
	return MNL_CB_OK;
}

/* Every verdict pepd sent: for a packet it was given, once, and a rewrite keeps what a rewrite must. */
static void check_verdicts(void)
{
	size_t off = 0;
	int i;

	while (off + sizeof(struct nlmsghdr) <= nl.sent_len) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)(nl.sent + off);
		struct nlattr *attr[NFQA_MAX + 1] = { NULL };
		const struct nfqnl_msg_verdict_hdr *vh;
		const struct nfgenmsg *g;
		uint32_t id;

		size_t at = off;

		PROMISE(nlh->nlmsg_len >= sizeof(*nlh) && off + nlh->nlmsg_len <= nl.sent_len);
		off += MNL_ALIGN(nlh->nlmsg_len);
		if ((nlh->nlmsg_type & 0xff) != NFQNL_MSG_VERDICT && (nlh->nlmsg_type & 0xff) != NFQNL_MSG_VERDICT_BATCH)
			continue;	/* configuration (bind, params, unbind) */
		g = mnl_nlmsg_get_payload(nlh);
		PROMISE(ntohs(g->res_id) == QUEUE);
		PROMISE(mnl_attr_parse(nlh, sizeof(*g), attr_cb, attr) >= 0);
		PROMISE(attr[NFQA_VERDICT_HDR]);
		vh = mnl_attr_get_payload(attr[NFQA_VERDICT_HDR]);
		id = ntohl(vh->id);
		if ((nlh->nlmsg_type & 0xff) == NFQNL_MSG_VERDICT_BATCH) {
			/* what the kernel's queue held then: every packet given so far, not answered, up to id */
			PROMISE(ntohl(vh->verdict) == NF_ACCEPT && !attr[NFQA_PAYLOAD]);
			for (i = 0; i < npk; i++)
				if (pk[i].given_at <= at && !pk[i].verdicts && !nfqueue_id_after(pk[i].id, id))
					pk[i].verdicts++;
			continue;
		}
		/* in order: a raw input may repeat an id (the kernel never does while one is pending) */
		for (i = 0; i < npk && (pk[i].id != id || pk[i].verdicts || pk[i].given_at > at); i++)
			;
		PROMISE(i < npk);	/* a verdict for a packet pepd was given */
		pk[i].verdicts++;
		PROMISE(ntohl(vh->verdict) == NF_ACCEPT || ntohl(vh->verdict) == NF_DROP);
		if (!pk[i].parsed)
			PROMISE(ntohl(vh->verdict) == NF_ACCEPT && !attr[NFQA_PAYLOAD]);
		if (pk[i].cut)
			PROMISE(!attr[NFQA_PAYLOAD]);	/* its bytes would replace, and cut, the packet */
		if (attr[NFQA_PAYLOAD]) {
			const uint8_t *out = mnl_attr_get_payload(attr[NFQA_PAYLOAD]);
			uint32_t len = mnl_attr_get_payload_len(attr[NFQA_PAYLOAD]);
			struct pkt a, b;

			/*
			 * The IP packet, not the buffer: bytes past the IP length (which the
			 * kernel trims before FORWARD, so that pepd never sees any) are not kept.
			 */
			PROMISE(pkt_parse(pk[i].data, pk[i].len, &a) == PKT_OK && pkt_parse(out, len, &b) == PKT_OK);
			PROMISE(ntohl(vh->verdict) == NF_ACCEPT && len == a.len);
			PROMISE(a.family == b.family && memcmp(a.src, b.src, 16) == 0 && memcmp(a.dst, b.dst, 16) == 0);
			PROMISE(a.sport == b.sport && a.dport == b.dport && a.seq == b.seq && a.ack == b.ack &&
				a.payload_len == b.payload_len && a.flags == b.flags);
			PROMISE(memcmp(pk[i].data + a.payload_off, out + b.payload_off, a.payload_len) == 0);
		}
	}
	for (i = 0; i < npk; i++)
		PROMISE(pk[i].verdicts == 1);
}

/* ---------------------------------------------------------------- the input */

/* The IPv4 or IPv6 header and TCP checksums of p, when it is long enough to have them. */
static void checksums_right(uint8_t *p, size_t len)
{
	if (len >= 20 && p[0] >> 4 == 4) {
		uint32_t ihl = (p[0] & 15u) * 4, total = (uint32_t)(p[2] << 8 | p[3]);

		if (ihl < 20 || ihl > len)
			return;
		csum_ipv4_header(p, ihl);
		if (p[9] == 6 && total <= len && total >= ihl + 20 && !(p[6] & 0x3f) && !p[7])
			csum_tcp(p + ihl, total - ihl, 4, p + 12, p + 16);
	} else if (len >= 60 && p[0] >> 4 == 6 && p[6] == 6) {
		uint32_t plen = (uint32_t)(p[4] << 8 | p[5]);

		if (plen >= 20 && 40 + plen <= len)
			csum_tcp(p + 40, plen, 6, p + 8, p + 24);
	}
}

static void put_u32_attr(struct nlmsghdr *nlh, uint16_t type, uint32_t v)
{
	mnl_attr_put_u32(nlh, type, htonl(v));
}

/* Records to netlink datagrams, as the kernel would write them (nfqnl_build_packet_message). */
static void build_datagrams(const uint8_t *data, size_t size)
{
	static uint8_t ippkt[256];
	size_t pos = 0, used = 0;
	uint32_t id = 1;
	uint8_t *cur = NULL;
	int records = 0;

	/* at most MAX_PKTS records: the checks follow each packet pepd was given */
	while (pos + 3 <= size && nl.n <= MAX_DGRAMS && records++ < MAX_PKTS) {
		uint8_t flags = data[pos], dev = data[pos + 1], len = data[pos + 2];
		struct nlmsghdr *nlh;
		struct nfgenmsg *g;

		pos += 3;
		if (len > size - pos)
			len = (uint8_t)(size - pos);
		memcpy(ippkt, data + pos, len);
		pos += len;
		if (!(flags & 0x40))
			checksums_right(ippkt, len);
		if (!cur || flags & 0x10 || used + MNL_SOCKET_BUFFER_SIZE > DGRAM_MAX) {
			if (nl.n == MAX_DGRAMS)
				break;
			cur = nl.dgram[nl.n] = calloc(1, DGRAM_MAX);
			PROMISE(cur);
			nl.len[nl.n++] = 0;
			used = 0;
		}
		nlh = mnl_nlmsg_put_header(cur + used);
		nlh->nlmsg_type = NFNL_SUBSYS_QUEUE << 8 | NFQNL_MSG_PACKET;
		g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
		g->nfgen_family = AF_UNSPEC;
		g->version = NFNETLINK_V0;
		g->res_id = htons(QUEUE);
		if (flags & 0x20)
			id++;
		if (!(flags & 1)) {
			struct nfqnl_msg_packet_hdr ph = { .packet_id = htonl(id), .hw_protocol = htons(0x0800), .hook = 2 };

			mnl_attr_put(nlh, NFQA_PACKET_HDR, sizeof(ph), &ph);
		}
		id++;
		if (!(dev & 4))
			put_u32_attr(nlh, NFQA_IFINDEX_INDEV, dev & 2 ? WIRELESS_IFINDEX : 2);
		if (!(dev & 8))
			put_u32_attr(nlh, NFQA_IFINDEX_OUTDEV, dev & 1 ? WIRELESS_IFINDEX : 2);
		if (flags & 4)
			put_u32_attr(nlh, NFQA_CAP_LEN, len);	/* the whole packet's length; 64 bytes of it follow */
		if (flags & 8)
			put_u32_attr(nlh, NFQA_SKB_INFO, NFQA_SKB_GSO);
		if (!(flags & 2))
			mnl_attr_put(nlh, NFQA_PAYLOAD, flags & 4 && len > 64 ? 64 : len, ippkt);
		used += nlh->nlmsg_len;
		nl.len[nl.n - 1] = used;
	}
}

/* Raw datagrams: a 2-byte length, then that many bytes the receive loop reads as is. */
static void raw_datagrams(const uint8_t *data, size_t size)
{
	size_t pos = 0;

	while (pos + 2 <= size && nl.n < MAX_DGRAMS) {
		size_t len = (size_t)(data[pos] << 8 | data[pos + 1]);

		pos += 2;
		if (len > size - pos)
			len = size - pos;
		nl.dgram[nl.n] = malloc(len ? len : 1);
		PROMISE(nl.dgram[nl.n]);
		memcpy(nl.dgram[nl.n], data + pos, len);
		nl.len[nl.n++] = len;
		pos += len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const filters[] = { "passthrough", "snoop", "snoop+", "pc" };
	static struct pepd_queue q;
	struct pep_config cfg;
	struct nfqueue_params params = { .queue = QUEUE, .maxlen = 64, .socket_buffer = 1 << 20, .fail_open = true,
					 .flush_bound = 1 };
	char err[PEP_ERR_MAX];
	uint64_t seed = 1;
	int i;

	if (size < 1)
		return 0;
	config_defaults(&cfg);
	PROMISE(config_set(&cfg, "wireless", "lo", "fuzz", err, sizeof(err)) == 0);
	PROMISE(config_set(&cfg, "filter", filters[data[0] & 3], "fuzz", err, sizeof(err)) == 0);
	cfg.gso = params.gso = data[0] & 8;
	if (data[0] & 16)
		cfg.forward = FORWARD_ACCEPT;
	if (data[0] & 32)
		params.flush_bound = 64;
	cfg.headers_only = data[0] & 64;
	params.copy_range = pepd_copy_range(&cfg);
	cfg.max_flows = 8;
	memset(&q, 0, sizeof(q));
	q.cfg = &cfg;
	q.caches_data = cfg.filter == FILTER_SNOOP || cfg.filter == FILTER_SNOOPPLUS;
	q.ops = filter_find(config_filter_name(cfg.filter));
	PROMISE(q.ops);
	PROMISE(flow_table_init(&q.ft, cfg.max_flows, seed, 1 << 20, (uint32_t)cfg.flow_cache_bytes) == 0);
	q.inj.fd4 = q.inj.fd6 = q.inj.rtx4 = q.inj.rtx6 = -1;	/* every send fails: nothing leaves */
	q.inj.mtu = 1500;
	q.ifs.n = 1;
	q.ifs.port[0] = WIRELESS_IFINDEX;
	q.ifindex_checked_ns = pepd_now_ns();
	memset(&nl, 0, sizeof(nl));
	npk = 0;
	nfqueue_init(&q.nfq);
	PROMISE(nfqueue_open(&q.nfq, &params, err, sizeof(err)) == 0);

	if (data[0] & 4)
		raw_datagrams(data + 1, size - 1);
	else
		build_datagrams(data + 1, size - 1);
	nl.sent_len = 0;	/* forget the set-up's configuration messages */
	nfqueue_receive(&q.nfq, MAX_DGRAMS + 1, record, &q);
	check_verdicts();
	if (getenv("FUZZ_NFQ_VERBOSE"))	/* what an input reached, to write seeds that go somewhere */
		fprintf(stderr, "packets %d, parsed ok %llu, flows %llu, data %llu, acks %llu, mangled %llu, dropped dupacks %llu, "
			"local rtx %llu, inject errors %llu\n", npk, (unsigned long long)q.stats.parse[PKT_OK],
			(unsigned long long)q.stats.flows_created, (unsigned long long)q.stats.total.data_packets,
			(unsigned long long)q.stats.total.ack_packets, (unsigned long long)q.stats.verdicts_mangled,
			(unsigned long long)q.stats.total.dupacks_dropped, (unsigned long long)q.stats.total.local_rtx,
			(unsigned long long)q.stats.total.inject_errors);

	nfqueue_close(&q.nfq);
	flow_table_free(&q.ft);
	for (i = 0; i < nl.n; i++)
		free(nl.dgram[i]);
	for (i = 0; i < npk; i++)
		free(pk[i].data);
	free(nl.sent);
	nl.sent = NULL;
	return 0;
}
