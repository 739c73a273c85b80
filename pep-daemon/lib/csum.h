/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Internet checksums (RFC 1071) for the packets pepd checks, builds or
 * changes.
 *
 * Two ways to change a packet's TCP checksum, for two kinds of packet:
 *   csum_tcp       recompute it from the bytes: only for bytes pepd wrote
 *                  itself or whose checksum it (or the kernel) verified;
 *   csum_tcp_edit  change some bytes and update the checksum by their
 *                  difference (RFC 1624, eqn. 3): a checksum that was wrong
 *                  stays wrong by exactly as much, so the receiver still
 *                  drops the packet.  For every edit of a packet pepd
 *                  passes on.
 */
#ifndef AIRTCP_CSUM_H
#define AIRTCP_CSUM_H

#include <stdbool.h>
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

/* Is the IPv4 header checksum right?  (ihl bytes at ip) */
bool csum_ipv4_header_ok(const uint8_t *ip, uint32_t ihl);

/* Is the TCP checksum right: the sum over pseudo-header and segment, checksum included, 0xffff? */
bool csum_tcp_ok(const uint8_t *tcp, uint32_t tcp_len, int family, const uint8_t *src, const uint8_t *dst);

/*
 * Replace n bytes at tcp + off (inside the tcp_len bytes of the segment,
 * never the checksum field itself, bytes 16-17) with repl, and update the
 * checksum field by the difference (RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m')).
 * Any offset and length: the 16-bit words the edit touches are summed
 * before and after.
 */
void csum_tcp_edit(uint8_t *tcp, uint32_t tcp_len, uint32_t off, const uint8_t *repl, uint32_t n);

#endif
