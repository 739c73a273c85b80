// SPDX-License-Identifier: GPL-2.0-only
/*
 * The parser: well-formed segments in both families with every option,
 * then one mutation per lie a header can tell, each with the result it
 * must produce (never a crash: the fuzzer covers the rest).
 */
#include "tcase.h"

static uint32_t good(int family, uint8_t *buf, struct tpkt *t)
{
	struct tpkt d = { .family = family, .from_fh = true, .seq = 1000, .ack = 2000, .flags = TCPF_ACK,
			  .win = 512, .len = 100, .ts = true, .tsval = 7, .tsecr = 9, .nsack = 2,
			  .sack = { { 3000, 4000 }, { 5000, 6000 } } };

	*t = d;
	return tc_build(t, buf, 2048);
}

static void well_formed(void)
{
	uint8_t buf[2048];
	struct tpkt t;
	struct pkt p;
	int family;

	for (family = 4; family <= 6; family += 2) {
		uint32_t n = good(family, buf, &t);

		CHECK(pkt_parse(buf, n, &p) == PKT_OK, "IPv%d segment", family);
		CHECK(p.family == family && p.seq == 1000 && p.ack == 2000 && p.window == 512, "fields v%d", family);
		CHECK(p.payload_len == 100 && p.len == n, "lengths v%d: %u %u", family, p.payload_len, p.len);
		CHECK(p.has_ts && p.tsval == 7 && p.tsecr == 9, "timestamps v%d", family);
		CHECK(p.nsack == 2 && p.sack[0].start == 3000 && p.sack[1].end == 6000, "sack v%d", family);
		CHECK(p.sack_opt_off > p.tcp_off && p.sack_opt_len == 18, "sack option position v%d", family);
		CHECK(p.sport == TC_FH_PORT && p.dport == TC_WH_PORT, "ports v%d", family);
	}
	{
		struct tpkt syn = { .family = 4, .from_fh = false, .seq = 1, .flags = TCPF_SYN, .win = 100,
				    .mss = 1460, .sack_perm = true, .ts = true };
		uint32_t n = tc_build(&syn, buf, sizeof(buf));

		CHECK(pkt_parse(buf, n, &p) == PKT_OK && p.has_mss && p.mss == 1460 && p.sack_permitted,
		      "SYN options");
		CHECK(pkt_seq_len(&p) == 1, "a SYN occupies one sequence number");
	}
}

/* A mutation of a well-formed IPv4 (or IPv6) segment and the result it must give. */
struct mutation {
	const char *name;
	int family;
	int offset;		/* byte to overwrite; negative counts from the TCP header */
	int value;		/* -1: no byte changed */
	uint32_t truncate;	/* if set, keep only this many bytes */
	enum pkt_result want;
};

static const struct mutation mutations[] = {
	{ "empty", 4, 0, -1, 0, PKT_ERR_EMPTY },
	{ "version 5", 4, 0, 0x55, 0, PKT_ERR_IP_VERSION },
	{ "shorter than an IPv4 header", 4, 0, -1, 19, PKT_ERR_IP_HEADER },
	{ "IHL 4", 4, 0, 0x44, 0, PKT_ERR_IP_HEADER },
	{ "IHL 15 past the buffer", 4, 0, 0x4f, 40, PKT_ERR_IP_HEADER },
	{ "total length below the header", 4, 3, 10, 0, PKT_ERR_IP_LENGTH },
	{ "total length past the buffer", 4, 2, 0x40, 0, PKT_ERR_IP_LENGTH },
	{ "cut inside the TCP header", 4, 0, -1, 30, PKT_ERR_IP_LENGTH },
	{ "more fragments", 4, 6, 0x20, 0, PKT_SKIP_FRAGMENT },
	{ "UDP", 4, 9, 17, 0, PKT_SKIP_NOT_TCP },
	{ "data offset 4", 4, -12, 0x40, 0, PKT_ERR_TCP_DOFF },
	{ "timestamp length 9", 4, -23, 9, 0, PKT_ERR_TCP_OPTION },
	{ "option length 1", 4, -23, 1, 0, PKT_ERR_TCP_OPTION },
	{ "option length past the header", 4, -23, 40, 0, PKT_ERR_TCP_OPTION },
	{ "SACK length 17", 4, -35, 17, 0, PKT_ERR_TCP_OPTION },
	{ "shorter than an IPv6 header", 6, 0, -1, 39, PKT_ERR_IP_HEADER },
	{ "IPv6 payload length past the buffer", 6, 4, 0x40, 0, PKT_ERR_IP_LENGTH },
	{ "IPv6 fragment header", 6, 6, 44, 0, PKT_SKIP_FRAGMENT },
	{ "IPv6 no next header", 6, 6, 59, 0, PKT_SKIP_NOT_TCP },
	{ "IPv6 hop-by-hop header running past the packet", 6, 6, 0, 0, PKT_ERR_IPV6_EXT },
	{ "IPv6 data offset 4", 6, -12, 0x40, 0, PKT_ERR_TCP_DOFF },
};

static void malformed(void)
{
	size_t i;

	for (i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++) {
		const struct mutation *m = &mutations[i];
		uint8_t buf[2048];
		struct tpkt t;
		struct pkt p;
		uint32_t n = good(m->family, buf, &t), tcp = m->family == 4 ? 20 : 40;
		enum pkt_result r;

		if (m->value >= 0)
			buf[m->offset < 0 ? tcp + (uint32_t)(-m->offset) : (uint32_t)m->offset] = (uint8_t)m->value;
		if (m->truncate || (m->value < 0 && m->offset == 0 && m->truncate == 0))
			n = m->truncate;
		r = pkt_parse(buf, n, &p);
		CHECK(r == m->want, "%s: got %s, expected %s", m->name, pkt_result_name(r), pkt_result_name(m->want));
	}
}

/* A hop-by-hop header in front of TCP is walked, and its length is checked. */
static void ipv6_extension(void)
{
	uint8_t buf[2048], ext[2048];
	struct tpkt t;
	struct pkt p;
	uint32_t n = good(6, buf, &t);

	memcpy(ext, buf, 40);
	ext[6] = 0;		/* next header: hop-by-hop */
	ext[40] = 6;		/* its next header: TCP */
	ext[41] = 0;		/* 8 bytes */
	memset(ext + 42, 1, 6);	/* PadN-ish filler */
	memcpy(ext + 48, buf + 40, n - 40);
	tc_put16(ext + 4, (uint16_t)(n - 40 + 8));
	CHECK(pkt_parse(ext, n + 8, &p) == PKT_OK && p.tcp_off == 48 && p.payload_len == 100,
	      "hop-by-hop then TCP: tcp_off %u", p.tcp_off);
	ext[41] = 200;		/* claims 1608 bytes */
	CHECK(pkt_parse(ext, n + 8, &p) == PKT_ERR_IPV6_EXT, "oversized extension header");
}

/* Lengths that only lie when the packet is short. */
static void short_segments(void)
{
	uint8_t buf[2048];
	struct tpkt t = { .family = 4, .from_fh = true, .flags = TCPF_ACK };
	struct pkt p;
	uint32_t n = tc_build(&t, buf, sizeof(buf));

	CHECK(pkt_parse(buf, n, &p) == PKT_OK && p.payload_len == 0, "a bare ACK");
	buf[32] = 0xf0;		/* data offset 60 in a 20-byte header */
	CHECK(pkt_parse(buf, n, &p) == PKT_ERR_TCP_DOFF, "data offset past the packet");
	buf[32] = 0x50;
	tc_put16(buf + 2, 30);	/* IP says 30 bytes: 10 of TCP */
	csum_ipv4_header(buf, 20);
	CHECK(pkt_parse(buf, n, &p) == PKT_ERR_TCP_TRUNCATED, "no room for the TCP header");
	/* the IPv6 jumbogram marker: payload length 0 */
	t.family = 6;
	n = tc_build(&t, buf, sizeof(buf));
	buf[4] = buf[5] = 0;
	CHECK(pkt_parse(buf, n, &p) == PKT_SKIP_JUMBO, "payload length 0");
}

/*
 * Headers only (headers_only: the kernel copied the first bytes and gave
 * the full length): judged against the full length, read only inside the
 * copy, and a copy that ends inside the headers is told apart from a lie.
 */
static void headers_only(void)
{
	static const struct {
		int family;
		uint32_t captured;	/* bytes copied */
		enum pkt_result want;
		bool short_copy;
		const char *why;
	} cases[] = {
		{ 4, 96, PKT_OK, false, "IPv4: the headers and a little payload" },
		{ 4, 72, PKT_OK, false, "IPv4: exactly the headers (20 + 52)" },
		{ 4, 71, PKT_ERR_TCP_TRUNCATED, true, "IPv4: the copy ends in the TCP options" },
		{ 4, 30, PKT_ERR_TCP_TRUNCATED, true, "IPv4: the copy ends in the fixed TCP header" },
		{ 4, 12, PKT_ERR_IP_HEADER, true, "IPv4: the copy ends in the IP header" },
		{ 6, 92, PKT_OK, false, "IPv6: exactly the headers (40 + 52)" },
		{ 6, 80, PKT_ERR_TCP_TRUNCATED, true, "IPv6: the copy ends in the TCP options" },
		{ 4, 4000, PKT_OK, false, "a copy longer than the packet is the packet" },
	};
	uint8_t buf[4096];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tpkt t;
		struct pkt p;
		uint32_t n = good(cases[i].family, buf, &t);
		bool short_copy = !cases[i].short_copy;
		enum pkt_result r = pkt_parse_headers(buf, cases[i].captured, n, &p, &short_copy);

		CHECK(r == cases[i].want && short_copy == cases[i].short_copy, "%s: %s%s", cases[i].why,
		      pkt_result_name(r), short_copy ? ", short copy" : "");
		if (r == PKT_OK)
			CHECK(p.len == n && p.captured == (cases[i].captured < n ? cases[i].captured : n) &&
			      p.payload_len == 100 && p.seq == 1000 && p.nsack == 2,
			      "%s: fields from the headers, lengths from the full packet", cases[i].why);
	}
	/* the full length still has to agree with the IP header */
	good(4, buf, &(struct tpkt){ 0 });
	CHECK(pkt_parse_headers(buf, 80, 100, &(struct pkt){ 0 }, &(bool){ false }) == PKT_ERR_IP_LENGTH,
	      "IP total length past the kernel's full length");
}

int main(void)
{
	well_formed();
	headers_only();
	short_segments();
	malformed();
	ipv6_extension();
	return tc_report("test_packet");
}
