// SPDX-License-Identifier: GPL-2.0-only
/*
 * Checksums: verification, and the incremental update (RFC 1624) against a
 * full recompute.  On a packet whose checksum is right, an incremental edit
 * must give exactly what a full recompute gives; on one whose checksum is
 * wrong, it must keep the error: editing a corrupted packet gives the same
 * bytes as corrupting the edited one.
 */
#include "tcase.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static uint16_t check_field(const uint8_t *tcp)
{
	return (uint16_t)(tcp[16] << 8 | tcp[17]);
}

/* RFC 1624 section 4: eqn. 3 gives 0x0000 where eqn. 2 would give 0xffff. */
static void rfc1624_example(void)
{
	uint8_t tcp[20] = { 0 };
	const uint8_t repl[2] = { 0x32, 0x85 };

	/* a header whose words sum (with the checksum field) as in the RFC's example */
	tcp[16] = 0xdd;
	tcp[17] = 0x2f;
	tcp[4] = 0x55;
	tcp[5] = 0x55;
	csum_tcp_edit(tcp, sizeof(tcp), 4, repl, 2);
	CHECK(check_field(tcp) == 0x0000, "RFC 1624's example: 0x%04x, expected 0x0000", check_field(tcp));
	CHECK(tcp[4] == 0x32 && tcp[5] == 0x85, "the bytes replaced");
}

/* A valid segment of random length and contents; returns its TCP length. */
static uint32_t random_segment(int family, uint8_t *buf, size_t bufsz, struct pkt *p)
{
	struct tpkt t = { .family = family, .from_fh = true, .seq = rnd(), .ack = rnd(), .flags = TCPF_ACK,
			  .win = (uint16_t)rnd(), .len = rnd() % 1461, .ts = rnd() & 1, .tsval = rnd(),
			  .nsack = (uint8_t)(rnd() % 3) };
	uint32_t n, i;

	for (i = 0; i < t.nsack; i++)
		t.sack[i] = (struct sack_block){ rnd(), rnd() };
	n = tc_build(&t, buf, bufsz);
	for (i = 0; i < t.len; i++)	/* random payload, then a right checksum again */
		buf[n - t.len + i] = (uint8_t)rnd();
	pkt_parse(buf, n, p);
	csum_tcp(buf + p->tcp_off, n - p->tcp_off, family, p->src, p->dst);
	return n - p->tcp_off;
}

static void incremental_equals_full(void)
{
	int family, round, mismatches = 0, invalid = 0;

	for (family = 4; family <= 6; family += 2) {
		for (round = 0; round < 2000; round++) {
			static uint8_t a[2048], b[2048];
			uint8_t repl[12];
			struct pkt p;
			uint32_t tl = random_segment(family, a, sizeof(a), &p), off, n, i;
			uint8_t *ta, *tb;

			/* anywhere but the checksum field, any alignment, up to the last (odd) byte */
			do {
				off = rnd() % tl;
				n = 1 + rnd() % 12;
				if (off + n > tl)
					n = tl - off;
			} while (off < 18 && off + n > 16);
			for (i = 0; i < n; i++)
				repl[i] = (uint8_t)rnd();
			memcpy(b, a, p.len);
			ta = a + p.tcp_off;
			tb = b + p.tcp_off;
			csum_tcp_edit(ta, tl, off, repl, n);
			memcpy(tb + off, repl, n);
			csum_tcp(tb, tl, family, p.src, p.dst);
			if (check_field(ta) != check_field(tb))
				mismatches++;
			if (!csum_tcp_ok(ta, tl, family, p.src, p.dst))
				invalid++;
		}
	}
	CHECK(mismatches == 0, "incremental update differs from a full recompute in %d of 4000 edits", mismatches);
	CHECK(invalid == 0, "incremental update left %d of 4000 valid packets invalid", invalid);
}

static void error_is_kept(void)
{
	int family, round, laundered = 0, differ = 0;

	for (family = 4; family <= 6; family += 2) {
		for (round = 0; round < 2000; round++) {
			static uint8_t a[2048], b[2048];
			const uint8_t repl[4] = { 0x12, 0x34, 0x56, (uint8_t)rnd() };
			struct pkt p;
			uint32_t tl = random_segment(family, a, sizeof(a), &p), where, off = 14;
			uint8_t bit = (uint8_t)(1u << (rnd() % 8));

			/* a bit flipped on the air, anywhere in the segment but the bytes edited below */
			do
				where = rnd() % tl;
			while ((where >= off && where < off + 2) || where == 16 || where == 17);
			memcpy(b, a, p.len);
			/* a: corrupted, then edited (the window field); b: edited, then corrupted */
			a[p.tcp_off + where] ^= bit;
			csum_tcp_edit(a + p.tcp_off, tl, off, repl, 2);
			csum_tcp_edit(b + p.tcp_off, tl, off, repl, 2);
			b[p.tcp_off + where] ^= bit;
			if (csum_tcp_ok(a + p.tcp_off, tl, family, p.src, p.dst))
				laundered++;
			if (memcmp(a, b, p.len) != 0)
				differ++;
		}
	}
	CHECK(laundered == 0, "an edit made %d of 4000 corrupted packets valid", laundered);
	CHECK(differ == 0, "edit(corrupt(p)) != corrupt(edit(p)) in %d of 4000 packets", differ);
}

static void verify(void)
{
	static uint8_t a[2048];
	struct pkt p;
	int family;

	for (family = 4; family <= 6; family += 2) {
		uint32_t tl = random_segment(family, a, sizeof(a), &p);

		CHECK(csum_tcp_ok(a + p.tcp_off, tl, family, p.src, p.dst), "v%d: a right checksum is right", family);
		a[p.len - 1] ^= 0x40;
		CHECK(!csum_tcp_ok(a + p.tcp_off, tl, family, p.src, p.dst), "v%d: one bit flipped is caught", family);
		a[p.len - 1] ^= 0x40;
		/* the pseudo-header counts: the same segment to another address is wrong */
		a[family == 4 ? 19 : 39] ^= 1;
		pkt_parse(a, p.len, &p);
		CHECK(!csum_tcp_ok(a + p.tcp_off, tl, family, p.src, p.dst), "v%d: another destination", family);
		if (family == 4) {
			CHECK(!csum_ipv4_header_ok(a, 20), "IPv4 header with a changed address");
			csum_ipv4_header(a, 20);
			CHECK(csum_ipv4_header_ok(a, 20), "IPv4 header recomputed");
		}
	}
}

/* 16 bits at a time, as RFC 1071 writes it: what the word-at-a-time csum_add must equal once folded. */
static uint16_t reference_fold(uint32_t sum, const uint8_t *data, size_t len)
{
	uint64_t acc = sum;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		acc += (uint32_t)(data[i] << 8 | data[i + 1]);
	if (len & 1)
		acc += (uint32_t)data[len - 1] << 8;
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)acc;
}

static uint16_t fold_of(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static void word_at_a_time(void)
{
	static uint8_t buf[70000];
	uint32_t seed = 1, i, bad = 0;

	for (i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (uint8_t)(seed >> 16);
	}
	/* every alignment, odd and even lengths, a carried-in sum, 0xff runs (carries everywhere) */
	for (i = 0; i < 3000; i++) {
		size_t off = i % 13, len = (i * 7919u) % 66000u;
		uint32_t in = i * 2654435761u;
		bad += fold_of(csum_add(in, buf + off, len)) != reference_fold(in, buf + off, len);
	}
	memset(buf, 0xff, 4096);
	bad += fold_of(csum_add(0, buf, 4096)) != reference_fold(0, buf, 4096);
	memset(buf, 0, 4096);
	bad += fold_of(csum_add(0, buf, 4096)) != 0;
	CHECK(bad == 0, "csum_add agrees with the 16-bit reference: %u disagreements", bad);
}

int main(void)
{
	word_at_a_time();
	rfc1624_example();
	incremental_equals_full();
	error_is_kept();
	verify();
	return tc_report("test_csum");
}
