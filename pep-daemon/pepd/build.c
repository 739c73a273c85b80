// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "build.h"
#include "csum.h"

#define DEFAULT_TTL 64

static void put16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static void put32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

/* Two NOPs and a 10-byte option of two 32-bit words (timestamps, one SACK block); returns past it. */
static uint8_t *put_two_word_option(uint8_t *opt, uint8_t kind, uint32_t a, uint32_t b)
{
	opt[0] = TCPOPT_NOP;
	opt[1] = TCPOPT_NOP;
	opt[2] = kind;
	opt[3] = 10;
	put32(opt + 4, a);
	put32(opt + 8, b);
	return opt + 12;
}

uint32_t build_ack(const struct ack_template *t, uint32_t ack, uint8_t *out)
{
	uint32_t ip_len = t->family == 4 ? 20 : 40;
	bool dsack = t->dsack_start != t->dsack_end;
	uint32_t tcp_len = 20 + (t->has_ts ? 12 : 0) + (dsack ? 12 : 0);
	uint8_t *ip = out, *tcp = out + ip_len, *opt = tcp + 20;

	memset(out, 0, ip_len + tcp_len);
	if (t->family == 4) {
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(ip_len + tcp_len));
		put16(ip + 6, 0x4000);	/* DF; the kernel fills in the id */
		ip[8] = DEFAULT_TTL;
		ip[9] = 6;
		memcpy(ip + 12, t->src, 4);
		memcpy(ip + 16, t->dst, 4);
		csum_ipv4_header(ip, ip_len);
	} else {
		ip[0] = 0x60;
		put16(ip + 4, (uint16_t)tcp_len);
		ip[6] = 6;
		ip[7] = DEFAULT_TTL;
		memcpy(ip + 8, t->src, 16);
		memcpy(ip + 24, t->dst, 16);
	}
	put16(tcp, t->sport);
	put16(tcp + 2, t->dport);
	put32(tcp + 4, t->seq);
	put32(tcp + 8, ack);
	tcp[12] = (uint8_t)((tcp_len / 4) << 4);
	tcp[13] = 0x10;		/* ACK */
	put16(tcp + 14, t->window);
	if (t->has_ts)
		opt = put_two_word_option(opt, TCPOPT_TIMESTAMP, t->tsval, t->tsecr);
	if (dsack)
		put_two_word_option(opt, TCPOPT_SACK, t->dsack_start, t->dsack_end);
	csum_tcp(tcp, tcp_len, t->family, t->src, t->dst);
	return ip_len + tcp_len;
}

/*
 * The option bytes that replace p's SACK option: as many of the n blocks
 * as its length holds (the option never grows), then NOPs; NOPs alone for
 * none.
 */
static void sack_option(const struct pkt *p, const struct sack_block *blocks, int n, uint8_t *opt)
{
	int fit = p->sack_opt_len >= 2 ? (p->sack_opt_len - 2) / 8 : 0, i;

	memset(opt, TCPOPT_NOP, p->sack_opt_len);
	if (n > fit)
		n = fit;
	if (n <= 0)
		return;
	opt[0] = TCPOPT_SACK;
	opt[1] = (uint8_t)(2 + 8 * n);
	for (i = 0; i < n; i++) {
		put32(opt + 2 + 8 * i, blocks[i].start);
		put32(opt + 6 + 8 * i, blocks[i].end);
	}
}

/* Replace n bytes at offset off of the packet copy out, updating its TCP checksum by the difference. */
static void edit(const struct pkt *p, uint8_t *out, uint32_t off, const uint8_t *repl, uint32_t n)
{
	csum_tcp_edit(out + p->tcp_off, p->len - p->tcp_off, off - p->tcp_off, repl, n);
}

void build_strip_sack(const struct pkt *p, uint8_t *out)
{
	build_edit_ack(p, true, NULL, 0, -1, out);
}

void build_one_sack(const struct pkt *p, const struct sack_block *block, uint8_t *out)
{
	build_edit_ack(p, false, block, 1, -1, out);
}

void build_edit_ack(const struct pkt *p, bool hide, const struct sack_block *blocks, int nblocks, int window,
		    uint8_t *out)
{
	uint8_t opt[40], win[2];

	memcpy(out, p->data, p->len);
	if ((nblocks > 0 || hide) && p->sack_opt_off) {
		sack_option(p, hide ? NULL : blocks, hide ? 0 : nblocks, opt);
		edit(p, out, p->sack_opt_off, opt, p->sack_opt_len);
	}
	if (window >= 0) {
		put16(win, (uint16_t)window);
		edit(p, out, p->tcp_off + 14u, win, 2);
	}
}

uint32_t build_slice_payload(uint32_t mtu, uint32_t payload_off, uint16_t mss, uint32_t tcp_opts)
{
	uint32_t room = mtu > payload_off + BUILD_MIN_SLICE ? mtu - payload_off : BUILD_MIN_SLICE;

	/* RFC 6691: the MSS counts payload without options */
	if (mss && (uint32_t)mss < room + tcp_opts)
		room = mss > tcp_opts + BUILD_MIN_SLICE ? mss - tcp_opts : BUILD_MIN_SLICE;
	return room;
}

int build_slices_range(const struct pkt *p, uint32_t from, uint32_t to, uint32_t max_payload, const uint32_t *tsval,
		       uint8_t *buf, size_t bufsz, build_emit_fn emit, void *ctx)
{
	uint32_t hdr = p->payload_off, done = from, chunk, total;
	uint16_t ipid = 0;
	int n = 0, err;
	uint8_t *tcp;

	if (max_payload == 0 || to > p->payload_len || (from >= to && p->payload_len))
		return -1;
	if ((to - from + max_payload - 1) / max_payload > BUILD_MAX_SLICES)
		return BUILD_TOO_MANY_SLICES;
	if (from == 0 && to == p->payload_len && p->payload_len <= max_payload) {
		/* one slice: the packet as cached; a new TSval updates the checksum by its difference */
		uint8_t ts[4];

		if (p->len > bufsz)
			return -1;
		memcpy(buf, p->data, p->len);
		if (tsval && p->ts_opt_off) {
			put32(ts, *tsval);
			edit(p, buf, p->ts_opt_off + 2u, ts, 4);
		}
		err = emit(ctx, buf, p->len);
		return err < 0 ? err : 1;
	}
	/*
	 * Several, or part of the packet: each slice's checksum is computed
	 * from its bytes, which pepd may do because a cached segment's
	 * checksum was verified (or the kernel built it) before it was cached.
	 */
	if (p->family == 4)
		ipid = (uint16_t)(p->data[4] << 8 | p->data[5]);
	do {
		chunk = to - done;
		if (chunk > max_payload)
			chunk = max_payload;
		total = hdr + chunk;
		if (total > bufsz)
			return -1;
		memcpy(buf, p->data, hdr);
		memcpy(buf + hdr, p->data + hdr + done, chunk);
		tcp = buf + p->tcp_off;
		put32(tcp + 4, p->seq + done);
		if (done + chunk < p->payload_len)
			tcp[13] &= (uint8_t)~(TCPF_FIN | TCPF_PSH);
		if (tsval && p->ts_opt_off)
			put32(buf + p->ts_opt_off + 2, *tsval);
		if (p->family == 4) {
			put16(buf + 2, (uint16_t)total);
			put16(buf + 4, (uint16_t)(ipid + done / max_payload));
			csum_ipv4_header(buf, p->tcp_off);
		} else {
			put16(buf + 4, (uint16_t)(total - 40));
		}
		csum_tcp(tcp, total - p->tcp_off, p->family, p->src, p->dst);
		err = emit(ctx, buf, total);
		if (err < 0)
			return err;
		n++;
		done += chunk;
	} while (done < to);
	return n;
}

int build_slices(const struct pkt *p, uint32_t max_payload, const uint32_t *tsval, uint8_t *buf, size_t bufsz,
		 build_emit_fn emit, void *ctx)
{
	return build_slices_range(p, 0, p->payload_len, max_payload, tsval, buf, bufsz, emit, ctx);
}
