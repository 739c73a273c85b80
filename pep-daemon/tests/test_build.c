// SPDX-License-Identifier: GPL-2.0-only
/*
 * Packets pepd writes: every one must parse, carry correct checksums
 * (verified independently: the one's-complement sum over a packet with its
 * checksum in place is 0xffff) and say what it was built to say.
 */
#include "tcase.h"

static bool tcp_checksum_ok(const struct pkt *p)
{
	uint32_t len = p->len - p->tcp_off, sum;
	uint8_t tail[8] = { 0 };
	size_t alen = p->family == 4 ? 4 : 16;

	sum = csum_add(0, p->src, alen);
	sum = csum_add(sum, p->dst, alen);
	if (p->family == 4) {
		tail[1] = 6;
		tail[2] = (uint8_t)(len >> 8);
		tail[3] = (uint8_t)len;
		sum = csum_add(sum, tail, 4);
	} else {
		tail[2] = (uint8_t)(len >> 8);
		tail[3] = (uint8_t)len;
		tail[7] = 6;
		sum = csum_add(sum, tail, 8);
	}
	sum = csum_add(sum, p->data + p->tcp_off, len);
	return csum_fold(sum) == 0;
}

static bool ip_checksum_ok(const struct pkt *p)
{
	return p->family == 6 || csum_fold(csum_add(0, p->data, p->tcp_off)) == 0;
}

static void acks(void)
{
	int family;

	for (family = 4; family <= 6; family += 2) {
		struct ack_template t = { .family = (uint8_t)family, .sport = 40000, .dport = 5201, .seq = 77,
					  .window = 300, .has_ts = true, .tsval = 11, .tsecr = 12 };
		uint8_t buf[BUILD_ACK_MAX];
		struct pkt p;
		uint32_t n;

		memcpy(t.src, family == 4 ? TC_WH4 : TC_WH6, family == 4 ? 4 : 16);
		memcpy(t.dst, family == 4 ? TC_FH4 : TC_FH6, family == 4 ? 4 : 16);
		n = build_ack(&t, 123456, buf);
		CHECK(pkt_parse(buf, n, &p) == PKT_OK, "ACK v%d parses", family);
		CHECK(p.ack == 123456 && p.seq == 77 && p.flags == TCPF_ACK && p.window == 300, "ACK v%d fields",
		      family);
		CHECK(p.has_ts && p.tsval == 11 && p.tsecr == 12 && p.payload_len == 0, "ACK v%d timestamps", family);
		CHECK(p.sport == 40000 && p.dport == 5201, "ACK v%d ports", family);
		CHECK(tcp_checksum_ok(&p) && ip_checksum_ok(&p), "ACK v%d checksums", family);
	}
}

static void strip_sack(void)
{
	struct tpkt t = { .family = 4, .from_fh = false, .seq = 5, .ack = 1000, .flags = TCPF_ACK, .win = 9,
			  .ts = true, .tsval = 3, .nsack = 3, .sack = { { 2000, 3000 }, { 4000, 5000 }, { 6000, 7000 } } };
	uint8_t in[2048], out[2048];
	struct pkt p, q;
	uint32_t n = tc_build(&t, in, sizeof(in));

	CHECK(pkt_parse(in, n, &p) == PKT_OK && p.nsack == 3, "SACK ACK parses");
	build_strip_sack(&p, out);
	CHECK(pkt_parse(out, n, &q) == PKT_OK, "stripped ACK parses");
	CHECK(q.nsack == 0 && q.has_ts && q.tsval == 3, "SACK gone, timestamps kept");
	CHECK(q.ack == 1000 && q.seq == 5 && q.len == p.len, "sequence numbers and length unchanged");
	CHECK(tcp_checksum_ok(&q) && ip_checksum_ok(&q), "stripped ACK checksums");
}

struct collected {
	int n;
	uint32_t seq[64];
	uint32_t len[64];
	uint8_t flags[64];
	bool csum_ok;
	uint8_t first_byte[64];
};

static int collect(void *opaque, const uint8_t *pkt, uint32_t len)
{
	struct collected *c = opaque;
	struct pkt p;

	if (pkt_parse(pkt, len, &p) != PKT_OK || c->n >= 64)
		return -1;
	c->seq[c->n] = p.seq;
	c->len[c->n] = p.payload_len;
	c->flags[c->n] = p.flags;
	c->first_byte[c->n] = pkt[p.payload_off];
	if (!tcp_checksum_ok(&p) || !ip_checksum_ok(&p))
		c->csum_ok = false;
	c->n++;
	return 0;
}

static int collect_ts(void *opaque, const uint8_t *pkt, uint32_t len)
{
	struct pkt p;

	if (pkt_parse(pkt, len, &p) != PKT_OK || !p.has_ts || p.tsval != 0xabcdef01u)
		return -1;
	return collect(opaque, pkt, len);
}

/* A GSO-sized cached segment goes out as MSS-sized slices. */
static void slices(void)
{
	int family;

	for (family = 4; family <= 6; family += 2) {
		struct tpkt t = { .family = family, .from_fh = true, .seq = 0xfffffc00u, .ack = 1,
				  .flags = TCPF_ACK | TCPF_PSH | TCPF_FIN, .win = 100, .len = 3500, .ts = true };
		static uint8_t in[8192], scratch[2048];
		struct collected c = { .csum_ok = true };
		struct pkt p;
		uint32_t n = tc_build(&t, in, sizeof(in));
		int r;

		CHECK(pkt_parse(in, n, &p) == PKT_OK, "super-packet v%d parses", family);
		r = build_slices(&p, 1448, NULL, scratch, sizeof(scratch), collect, &c);
		CHECK(r == 3 && c.n == 3, "v%d: 3500 bytes in 1448-byte slices: got %d", family, r);
		CHECK(c.seq[0] == 0xfffffc00u && c.seq[1] == 0xfffffc00u + 1448 && c.seq[2] == 1448 * 2 - 1024,
		      "v%d: slice sequence numbers (wrapping)", family);
		CHECK(c.len[0] == 1448 && c.len[1] == 1448 && c.len[2] == 604, "v%d: slice lengths", family);
		CHECK(!(c.flags[0] & (TCPF_PSH | TCPF_FIN)) && (c.flags[2] & TCPF_FIN), "v%d: PSH/FIN on the last only",
		      family);
		CHECK(c.first_byte[1] == (uint8_t)(0xfffffc00u + 1448), "v%d: slice payload is the right bytes", family);
		CHECK(c.csum_ok, "v%d: slice checksums", family);
		r = build_slices(&p, 1448, NULL, scratch, 100, collect, &c);
		CHECK(r < 0, "v%d: a scratch buffer too small is refused", family);
		{
			/* a fresh TSval in every slice, checksums still right */
			struct collected d = { .csum_ok = true };
			uint32_t fresh = 0xabcdef01u;

			r = build_slices(&p, 1000, &fresh, scratch, sizeof(scratch), collect_ts, &d);
			CHECK(r == 4 && d.csum_ok && d.n == 4, "v%d: TSval rewritten in 4 slices", family);
		}
	}
}

int main(void)
{
	acks();
	strip_sack();
	slices();
	return tc_report("test_build");
}
