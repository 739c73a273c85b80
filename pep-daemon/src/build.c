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

uint32_t build_ack(const struct ack_template *t, uint32_t ack, uint8_t *out)
{
	uint32_t ip_len = t->family == 4 ? 20 : 40;
	uint32_t tcp_len = 20 + (t->has_ts ? 12 : 0);
	uint8_t *ip = out, *tcp = out + ip_len;

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
	if (t->has_ts) {
		tcp[20] = TCPOPT_NOP;
		tcp[21] = TCPOPT_NOP;
		tcp[22] = TCPOPT_TIMESTAMP;
		tcp[23] = 10;
		put32(tcp + 24, t->tsval);
		put32(tcp + 28, t->tsecr);
	}
	csum_tcp(tcp, tcp_len, t->family, t->src, t->dst);
	return ip_len + tcp_len;
}

void build_strip_sack(const struct pkt *p, uint8_t *out)
{
	memcpy(out, p->data, p->len);
	if (p->sack_opt_off)
		memset(out + p->sack_opt_off, TCPOPT_NOP, p->sack_opt_len);
	csum_tcp(out + p->tcp_off, p->len - p->tcp_off, p->family, p->src, p->dst);
}

void build_one_sack(const struct pkt *p, const struct sack_block *block, uint8_t *out)
{
	uint8_t *opt;

	memcpy(out, p->data, p->len);
	if (p->sack_opt_off && p->sack_opt_len >= 10) {
		opt = out + p->sack_opt_off;
		memset(opt, TCPOPT_NOP, p->sack_opt_len);
		opt[0] = TCPOPT_SACK;
		opt[1] = 10;
		put32(opt + 2, block->start);
		put32(opt + 6, block->end);
	}
	csum_tcp(out + p->tcp_off, p->len - p->tcp_off, p->family, p->src, p->dst);
}

void build_edit_ack(const struct pkt *p, bool hide, const struct sack_block *one, int window, uint8_t *out)
{
	if (one)
		build_one_sack(p, one, out);
	else if (hide)
		build_strip_sack(p, out);
	else
		memcpy(out, p->data, p->len);
	if (window >= 0) {
		put16(out + p->tcp_off + 14, (uint16_t)window);
		csum_tcp(out + p->tcp_off, p->len - p->tcp_off, p->family, p->src, p->dst);
	}
}

int build_slices(const struct pkt *p, uint32_t max_payload, const uint32_t *tsval, uint8_t *buf, size_t bufsz,
		 build_emit_fn emit, void *ctx)
{
	uint32_t hdr = p->payload_off, done = 0, chunk, total;
	uint16_t ipid = 0;
	int n = 0, err;
	uint8_t *tcp;

	if (max_payload == 0)
		return -1;
	if (p->family == 4)
		ipid = (uint16_t)(p->data[4] << 8 | p->data[5]);
	do {
		chunk = p->payload_len - done;
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
			put16(buf + 4, (uint16_t)(ipid + n));
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
	} while (done < p->payload_len);
	return n;
}
