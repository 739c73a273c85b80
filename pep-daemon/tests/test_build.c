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
		CHECK(p.nsack == 0, "ACK v%d: no SACK option without a D-SACK block", family);
		t.dsack_start = 120000;
		t.dsack_end = 121448;
		n = build_ack(&t, 123456, buf);
		CHECK(n <= BUILD_ACK_MAX && pkt_parse(buf, n, &p) == PKT_OK, "D-SACK ACK v%d parses", family);
		CHECK(p.nsack == 1 && p.sack[0].start == 120000 && p.sack[0].end == 121448 && p.ack == 123456,
		      "D-SACK ACK v%d: one block below the cumulative ACK", family);
		CHECK(p.has_ts && p.tsval == 11 && p.tsecr == 12, "D-SACK ACK v%d keeps its timestamps", family);
		CHECK(tcp_checksum_ok(&p) && ip_checksum_ok(&p), "D-SACK ACK v%d checksums", family);
		t.has_ts = false;
		n = build_ack(&t, 123456, buf);
		CHECK(pkt_parse(buf, n, &p) == PKT_OK && !p.has_ts && p.nsack == 1 && p.sack[0].end == 121448,
		      "D-SACK ACK v%d without timestamps", family);
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
	/* every edit of an ACK whose ack number was corrupted on the air: the checksum stays wrong */
	in[p.tcp_off + 9] ^= 0x04;
	pkt_parse(in, n, &p);
	build_edit_ack(&p, true, NULL, 0, 77, out);
	pkt_parse(out, n, &q);
	CHECK(!tcp_checksum_ok(&q) && q.window == 77 && q.nsack == 0, "a corrupted ACK, edited, is still caught");
	build_one_sack(&p, &(struct sack_block){ 4000, 5000 }, out);
	pkt_parse(out, n, &q);
	CHECK(!tcp_checksum_ok(&q) && q.nsack == 1, "... cut to one block, too");
}

/* Two blocks where the option had three; one where it had one: it never grows. */
static void sack_blocks(void)
{
	static const struct sack_block two[2] = { { 6000, 7000 }, { 2000, 3000 } };
	struct tpkt t = { .family = 4, .from_fh = false, .seq = 5, .ack = 1000, .flags = TCPF_ACK, .win = 9,
			  .ts = true, .tsval = 3, .nsack = 3, .sack = { { 2000, 3000 }, { 4000, 5000 }, { 6000, 7000 } } };
	uint8_t in[2048], out[2048];
	struct pkt p, q;
	uint32_t n = tc_build(&t, in, sizeof(in));

	CHECK(pkt_parse(in, n, &p) == PKT_OK, "SACK ACK parses");
	build_edit_ack(&p, false, two, 2, -1, out);
	CHECK(pkt_parse(out, n, &q) == PKT_OK && q.nsack == 2, "two blocks (%d)", q.nsack);
	CHECK(q.sack[0].start == 6000 && q.sack[0].end == 7000 && q.sack[1].start == 2000 && q.sack[1].end == 3000,
	      "the blocks in order");
	CHECK(tcp_checksum_ok(&q) && q.len == p.len && q.has_ts && q.tsval == 3, "checksum, length, timestamps");
	t.nsack = 1;
	n = tc_build(&t, in, sizeof(in));
	CHECK(pkt_parse(in, n, &p) == PKT_OK && p.nsack == 1, "one-block ACK parses");
	build_edit_ack(&p, false, two, 2, -1, out);
	CHECK(pkt_parse(out, n, &q) == PKT_OK && q.nsack == 1 && q.sack[0].start == 6000, "only the first fits");
	CHECK(tcp_checksum_ok(&q), "its checksum");
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
		{
			/* one slice of a cached super-packet (the lost one): its bytes only, built from them */
			struct collected e = { .csum_ok = true };

			r = build_slices_range(&p, 1448, 2896, 1448, NULL, scratch, sizeof(scratch), collect, &e);
			CHECK(r == 1 && e.n == 1 && e.seq[0] == 0xfffffc00u + 1448 && e.len[0] == 1448 && e.csum_ok,
			      "v%d: the middle slice alone", family);
			CHECK(e.first_byte[0] == (uint8_t)(0xfffffc00u + 1448) && !(e.flags[0] & (TCPF_PSH | TCPF_FIN)),
			      "v%d: its payload, no PSH or FIN", family);
			e.n = 0;
			r = build_slices_range(&p, 2896, 3500, 1448, NULL, scratch, sizeof(scratch), collect, &e);
			CHECK(r == 1 && e.len[0] == 604 && (e.flags[0] & TCPF_FIN) && e.csum_ok, "v%d: the last keeps FIN",
			      family);
			e.n = 0;
			r = build_slices_range(&p, 1448, 2896, 536, NULL, scratch, sizeof(scratch), collect, &e);
			CHECK(r == 3 && e.seq[2] == 0xfffffc00u + 1448 + 1072 && e.len[2] == 376 && e.csum_ok,
			      "v%d: a smaller MSS now cuts the slice finer", family);
			CHECK(build_slices_range(&p, 2000, 2000, 1448, NULL, scratch, sizeof(scratch), collect, &e) < 0 &&
			      build_slices_range(&p, 0, 3501, 1448, NULL, scratch, sizeof(scratch), collect, &e) < 0,
			      "v%d: an empty range, or one past the payload, is refused", family);
		}
	}
}

/* How much payload a slice may carry: the MTU, the receiver's MSS, and the floor that stops a 1-byte MSS. */
static void slice_payload(void)
{
	static const struct {
		uint32_t mtu, payload_off;
		uint16_t mss;
		uint32_t opts, want;
		const char *why;
	} cases[] = {
		{ 1500, 52, 0, 12, 1448, "MTU only: 1500 - 52" },
		{ 1500, 52, 1460, 12, 1448, "MSS 1460 less 12 option bytes" },
		{ 1500, 52, 1000, 12, 988, "a smaller MSS wins" },
		{ 9000, 52, 1460, 12, 1448, "a jumbo MTU, the MSS wins" },
		{ 1500, 52, 536, 0, 536, "the classic 536" },
		{ 1500, 52, 1, 12, 48, "MSS 1: floored at 48 bytes, Linux's tcp_min_snd_mss" },
		{ 1500, 52, 60, 12, 48, "MSS 60 less 12: exactly the floor" },
		{ 1500, 52, 61, 12, 49, "just above it" },
		{ 80, 52, 0, 0, 48, "an MTU leaving less than the floor: the floor" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t got = build_slice_payload(cases[i].mtu, cases[i].payload_off, cases[i].mss, cases[i].opts);

		CHECK(got == cases[i].want, "%s: %u, expected %u", cases[i].why, got, cases[i].want);
	}
}

static int count_only(void *opaque, const uint8_t *pkt, uint32_t len)
{
	(void)pkt;
	(void)len;
	(*(int *)opaque)++;
	return 0;
}

/* A 64 KB super-packet and a peer that announced MSS 1: 128 slices at most, or none. */
static void slice_cap(void)
{
	struct tpkt t = { .family = 4, .from_fh = true, .seq = 1, .ack = 1, .flags = TCPF_ACK, .len = 65000 };
	static uint8_t in[66000], scratch[2048];
	int emitted = 0, r;
	struct pkt p;

	pkt_parse(in, tc_build(&t, in, sizeof(in)), &p);
	r = build_slices(&p, build_slice_payload(1500, p.payload_off, 1, 0), NULL, scratch, sizeof(scratch), count_only,
			 &emitted);
	CHECK(r == BUILD_TOO_MANY_SLICES && emitted == 0, "65000 bytes in 48-byte slices (1355) refused: %d, %d sent",
	      r, emitted);
	r = build_slices(&p, 507, NULL, scratch, sizeof(scratch), count_only, &emitted);
	CHECK(r == BUILD_TOO_MANY_SLICES && emitted == 0, "... and in 507-byte slices (128 + 1)");
	r = build_slices(&p, 508, NULL, scratch, sizeof(scratch), count_only, &emitted);
	CHECK(r == 128 && emitted == 128, "508-byte slices: 128, the most there may be: %d", r);
}

/* One slice (the segment fits): sent as it is, a new TSval with an incremental checksum update. */
static void one_slice(void)
{
	struct tpkt t = { .family = 6, .from_fh = true, .seq = 7, .ack = 1, .flags = TCPF_ACK | TCPF_PSH, .len = 1000,
			  .ts = true, .tsval = 5 };
	uint8_t in[2048], scratch[2048];
	struct collected c = { .csum_ok = true };
	uint32_t fresh = 0xabcdef01u, n = tc_build(&t, in, sizeof(in));
	struct pkt p;
	int r;

	pkt_parse(in, n, &p);
	r = build_slices(&p, 1448, &fresh, scratch, sizeof(scratch), collect_ts, &c);
	CHECK(r == 1 && c.n == 1 && c.csum_ok && c.len[0] == 1000 && (c.flags[0] & TCPF_PSH), "one slice, TSval new");
	/* a segment whose payload is corrupted keeps its error through the TSval edit */
	in[n - 1] ^= 0x01;
	c = (struct collected){ .csum_ok = true };
	r = build_slices(&p, 1448, &fresh, scratch, sizeof(scratch), collect, &c);
	CHECK(r == 1 && !c.csum_ok, "a wrong checksum stays wrong through the edit");
}

int main(void)
{
	sack_blocks();
	acks();
	strip_sack();
	slices();
	slice_payload();
	slice_cap();
	one_slice();
	return tc_report("test_build");
}
