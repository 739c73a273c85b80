// SPDX-License-Identifier: GPL-2.0-only
#include "csum.h"

uint32_t csum_add(uint32_t sum, const uint8_t *data, size_t len)
{
	uint64_t acc = sum;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		acc += (uint32_t)(data[i] << 8 | data[i + 1]);
	if (len & 1)
		acc += (uint32_t)data[len - 1] << 8;
	while (acc >> 32)
		acc = (acc & 0xffffffff) + (acc >> 32);
	return (uint32_t)acc;
}

uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
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

void csum_tcp(uint8_t *tcp, uint32_t tcp_len, int family, const uint8_t *src, const uint8_t *dst)
{
	uint8_t tail[8];
	uint32_t sum;
	size_t alen = family == 4 ? 4 : 16;
	uint16_t c;

	tcp[16] = 0;
	tcp[17] = 0;
	sum = csum_add(0, src, alen);
	sum = csum_add(sum, dst, alen);
	/* IPv4: zero, protocol, TCP length (16 bits); IPv6: length (32), zeros, next header */
	if (family == 4) {
		tail[0] = 0;
		tail[1] = 6;
		tail[2] = (uint8_t)(tcp_len >> 8);
		tail[3] = (uint8_t)tcp_len;
		sum = csum_add(sum, tail, 4);
	} else {
		tail[0] = (uint8_t)(tcp_len >> 24);
		tail[1] = (uint8_t)(tcp_len >> 16);
		tail[2] = (uint8_t)(tcp_len >> 8);
		tail[3] = (uint8_t)tcp_len;
		tail[4] = 0;
		tail[5] = 0;
		tail[6] = 0;
		tail[7] = 6;
		sum = csum_add(sum, tail, 8);
	}
	sum = csum_add(sum, tcp, tcp_len);
	c = csum_fold(sum);
	tcp[16] = (uint8_t)(c >> 8);
	tcp[17] = (uint8_t)c;
}
