/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The packet parser: raw IPv4/IPv6 bytes from NFQUEUE into a plain struct,
 * every length checked before it is used.  Nothing downstream ever reads
 * the raw bytes through a header field again; it reads struct pkt.
 *
 * The result is one of three kinds:
 *   PKT_OK            a TCP segment we understand;
 *   PKT_SKIP_*        well-formed but not ours (fragment, not TCP, jumbogram):
 *                     passed unchanged, counted as "unhandled";
 *   PKT_ERR_*         malformed: some length or field lies; passed unchanged
 *                     (the kernel forwarded it, it is not our job to drop it)
 *                     and counted as "malformed", per reason.
 */
#ifndef AIRTCP_PACKET_H
#define AIRTCP_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PKT_MAX_SACK 4		/* 40 option bytes hold at most 4 blocks */

enum pkt_result {
	PKT_OK = 0,
	/* unhandled, not malformed */
	PKT_SKIP_FRAGMENT,
	PKT_SKIP_NOT_TCP,
	PKT_SKIP_JUMBO,
	/* malformed */
	PKT_ERR_EMPTY,
	PKT_ERR_IP_VERSION,
	PKT_ERR_IP_HEADER,
	PKT_ERR_IP_LENGTH,
	PKT_ERR_IPV6_EXT,
	PKT_ERR_TCP_TRUNCATED,
	PKT_ERR_TCP_DOFF,
	PKT_ERR_TCP_OPTION,
	PKT__RESULT_COUNT
};

#define PKT_FIRST_ERROR PKT_ERR_EMPTY

static inline bool pkt_malformed(enum pkt_result r)
{
	return r >= PKT_FIRST_ERROR;
}

/* TCP flags, as on the wire */
#define TCPF_FIN 0x01
#define TCPF_SYN 0x02
#define TCPF_RST 0x04
#define TCPF_PSH 0x08
#define TCPF_ACK 0x10
#define TCPF_URG 0x20
#define TCPF_ECE 0x40
#define TCPF_CWR 0x80

/* TCP option kinds we understand */
#define TCPOPT_EOL 0
#define TCPOPT_NOP 1
#define TCPOPT_MSS 2
#define TCPOPT_WSCALE 3
#define TCPOPT_SACK_PERM 4
#define TCPOPT_SACK 5
#define TCPOPT_TIMESTAMP 8

struct sack_block {
	uint32_t start;		/* first sequence number of the block */
	uint32_t end;		/* one past the last */
};

struct pkt {
	const uint8_t *data;	/* the whole IP packet (not owned), or its headers (pkt_parse_headers) */
	uint32_t len;		/* bytes of it that belong to the packet */
	uint32_t captured;	/* bytes at data: len, or fewer when only the headers were copied */
	uint8_t family;		/* 4 or 6 */
	uint8_t addr_len;	/* 4 or 16 */
	uint16_t tcp_off;	/* offset of the TCP header in data */
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t window;	/* raw field, unscaled */
	uint16_t tcp_hlen;	/* TCP header with options */
	uint32_t payload_off;
	uint32_t payload_len;

	/* options */
	bool has_mss, has_wscale, sack_permitted, has_ts;
	uint16_t mss;
	uint8_t wscale;
	uint32_t tsval, tsecr;
	uint8_t nsack;
	struct sack_block sack[PKT_MAX_SACK];
	uint16_t ts_opt_off;	/* offset of the timestamp option in data, 0 if none */
	uint16_t sack_opt_off;	/* offset of the SACK option in data, 0 if none */
	uint8_t sack_opt_len;	/* its length, kind and length bytes included */
};

/* Parse len bytes at buf; on PKT_OK every field of *p is valid. */
enum pkt_result pkt_parse(const uint8_t *buf, size_t len, struct pkt *p);

/*
 * Parse the headers of a packet copied only in part: the first captured
 * bytes (at buf) of a packet full_len bytes long (the kernel's cap_len).
 * Lengths are judged against full_len, and every header byte read must
 * lie in the copy; on PKT_OK every field of *p is valid, p->len is
 * full_len's IP length and p->captured says how much of it is at p->data
 * (the payload is not: nothing may read it, checksum it or send it on).
 * *short_copy says the copy ended inside the headers: not the packet's
 * fault (the result is then PKT_ERR_TCP_TRUNCATED or an IP error).
 */
enum pkt_result pkt_parse_headers(const uint8_t *buf, size_t captured, size_t full_len, struct pkt *p,
				  bool *short_copy);

const char *pkt_result_name(enum pkt_result r);

/* Sequence space the segment occupies: payload, plus one each for SYN/FIN. */
static inline uint32_t pkt_seq_len(const struct pkt *p)
{
	return p->payload_len + !!(p->flags & TCPF_SYN) + !!(p->flags & TCPF_FIN);
}

static inline uint32_t pkt_end(const struct pkt *p)
{
	return p->seq + pkt_seq_len(p);
}

#endif
