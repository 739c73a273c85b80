/* SPDX-License-Identifier: GPL-2.0-only */
/* Internet checksums (RFC 1071) for the packets pepd builds or changes. */
#ifndef PEPD_CSUM_H
#define PEPD_CSUM_H

#include <stddef.h>
#include <stdint.h>

/* One's-complement sum of len bytes, added to sum (not folded). */
uint32_t csum_add(uint32_t sum, const uint8_t *data, size_t len);

/* Fold a 32-bit sum to 16 bits and complement it. */
uint16_t csum_fold(uint32_t sum);

/*
 * Rewrite the IPv4 header checksum (ip points at the IPv4 header of ihl
 * bytes) and the TCP checksum of the segment at tcp (tcp_len bytes, header
 * plus payload), with the pseudo-header of family 4 or 6.
 */
void csum_ipv4_header(uint8_t *ip, uint32_t ihl);
void csum_tcp(uint8_t *tcp, uint32_t tcp_len, int family, const uint8_t *src, const uint8_t *dst);

#endif
