// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "csum.h"

#define TCP_CHECK_OFF 16

/*
 * Eight bytes at a time in the machine's byte order, then swapped: the
 * one's-complement sum commutes with byte swapping (RFC 1071 2(B)), and a
 * 64 KiB GSO packet is summed several times faster than 16 bits at a time.
 */
uint32_t csum_add(uint32_t sum, const uint8_t *data, size_t len)
{
	uint64_t acc = 0, w;
	uint32_t folded;
	uint16_t h;
	size_t i = 0;

	/* each step adds less than 2^33: 64 KiB of them stay far below 2^64 */
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, data + i, 8);
		acc += (w & 0xffffffff) + (w >> 32);
	}
	for (; i + 2 <= len; i += 2) {
		memcpy(&h, data + i, 2);
		acc += h;
	}
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	folded = (uint32_t)acc;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	folded = (folded >> 8 | folded << 8) & 0xffff;
#endif
	if (len & 1)
		folded += (uint32_t)data[len - 1] << 8;
	acc = (uint64_t)sum + folded;
	while (acc >> 32)
		acc = (acc & 0xffffffff) + (acc >> 32);
	return (uint32_t)acc;
}

/* Fold to 16 bits without complementing: the one's-complement sum itself. */
static uint16_t fold16(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

uint16_t csum_fold(uint32_t sum)
{
	return (uint16_t)~fold16(sum);
}

void csum_ipv4_header(uint8_t *ip, uint32_t ihl)
{
	uint16_t c;

	ip[10] = 0;
	ip[11] = 0;
	c = csum_fold(csum_add(0, ip, ihl));
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
}

bool csum_ipv4_header_ok(const uint8_t *ip, uint32_t ihl)
{
	return csum_fold(csum_add(0, ip, ihl)) == 0;
}

/* The pseudo-header's sum: addresses, protocol, TCP length (RFC 9293 3.1, RFC 8200 8.1). */
static uint32_t pseudo_sum(uint32_t tcp_len, int family, const uint8_t *src, const uint8_t *dst)
{
	uint8_t tail[8];
	size_t alen = family == 4 ? 4 : 16;
	uint32_t sum;

	sum = csum_add(0, src, alen);
	sum = csum_add(sum, dst, alen);
	/* IPv4: zero, protocol, TCP length (16 bits); IPv6: length (32), zeros, next header */
	if (family == 4) {
		tail[0] = 0;
		tail[1] = 6;
		tail[2] = (uint8_t)(tcp_len >> 8);
		tail[3] = (uint8_t)tcp_len;
		return csum_add(sum, tail, 4);
	}
	tail[0] = (uint8_t)(tcp_len >> 24);
	tail[1] = (uint8_t)(tcp_len >> 16);
	tail[2] = (uint8_t)(tcp_len >> 8);
	tail[3] = (uint8_t)tcp_len;
	tail[4] = 0;
	tail[5] = 0;
	tail[6] = 0;
	tail[7] = 6;
	return csum_add(sum, tail, 8);
}

void csum_tcp(uint8_t *tcp, uint32_t tcp_len, int family, const uint8_t *src, const uint8_t *dst)
{
	uint16_t c;

	tcp[TCP_CHECK_OFF] = 0;
	tcp[TCP_CHECK_OFF + 1] = 0;
	c = csum_fold(csum_add(pseudo_sum(tcp_len, family, src, dst), tcp, tcp_len));
	tcp[TCP_CHECK_OFF] = (uint8_t)(c >> 8);
	tcp[TCP_CHECK_OFF + 1] = (uint8_t)c;
}

bool csum_tcp_ok(const uint8_t *tcp, uint32_t tcp_len, int family, const uint8_t *src, const uint8_t *dst)
{
	return csum_fold(csum_add(pseudo_sum(tcp_len, family, src, dst), tcp, tcp_len)) == 0;
}

void csum_tcp_edit(uint8_t *tcp, uint32_t tcp_len, uint32_t off, const uint8_t *repl, uint32_t n)
{
	/* the 16-bit words (counted from the TCP header, as the sum counts them) the edit touches */
	uint32_t a = off & ~1u, b = (off + n + 1) & ~1u;
	uint16_t hc, m, m2;
	uint32_t sum;

	if (n == 0)
		return;
	if (b > tcp_len)
		b = tcp_len;	/* an odd last byte: the sum pads it with zero, before and after alike */
	m = fold16(csum_add(0, tcp + a, b - a));
	memcpy(tcp + off, repl, n);
	m2 = fold16(csum_add(0, tcp + a, b - a));
	hc = (uint16_t)(tcp[TCP_CHECK_OFF] << 8 | tcp[TCP_CHECK_OFF + 1]);
	/* RFC 1624 eqn. 3, in one's-complement arithmetic: HC' = ~(~HC + ~m + m') */
	sum = (uint32_t)(uint16_t)~hc + (uint16_t)~m + m2;
	hc = csum_fold(sum);
	tcp[TCP_CHECK_OFF] = (uint8_t)(hc >> 8);
	tcp[TCP_CHECK_OFF + 1] = (uint8_t)hc;
}
