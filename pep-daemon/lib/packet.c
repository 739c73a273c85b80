// SPDX-License-Identifier: GPL-2.0-only
/*
 * Packet parser.  Each check names the lie it catches: a header that
 * claims more bytes than the buffer holds, an option that runs past the
 * header, a length field smaller than the header it describes.
 */
#include <string.h>

#include "packet.h"

#define IPV4_MIN_HLEN 20
#define IPV6_HLEN 40
#define TCP_MIN_HLEN 20
#define IPV6_MAX_EXT_HEADERS 8	/* more than any sane packet carries */

#define IPPROTO_HOPOPTS_ 0
#define IPPROTO_TCP_ 6
#define IPPROTO_ROUTING_ 43
#define IPPROTO_FRAGMENT_ 44
#define IPPROTO_AH_ 51
#define IPPROTO_DSTOPTS_ 60

static const char *const result_names[PKT__RESULT_COUNT] = {
	[PKT_OK] = "ok",
	[PKT_SKIP_FRAGMENT] = "fragment",
	[PKT_SKIP_NOT_TCP] = "not_tcp",
	[PKT_SKIP_JUMBO] = "jumbogram",
	[PKT_ERR_EMPTY] = "empty",
	[PKT_ERR_IP_VERSION] = "ip_version",
	[PKT_ERR_IP_HEADER] = "ip_header",
	[PKT_ERR_IP_LENGTH] = "ip_length",
	[PKT_ERR_IPV6_EXT] = "ipv6_extension",
	[PKT_ERR_TCP_TRUNCATED] = "tcp_truncated",
	[PKT_ERR_TCP_DOFF] = "tcp_data_offset",
	[PKT_ERR_TCP_OPTION] = "tcp_option",
};

const char *pkt_result_name(enum pkt_result r)
{
	if ((unsigned int)r >= PKT__RESULT_COUNT)
		return "unknown";
	return result_names[r];
}

static uint16_t be16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

static uint32_t be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/*
 * IPv4: on success *l4 is the TCP header offset and *end the packet end.
 * avail bytes are at b, of a packet len bytes long (the same unless only
 * its headers were copied).
 */
static enum pkt_result parse_ipv4(const uint8_t *b, size_t avail, size_t len, struct pkt *p, uint32_t *l4,
				  uint32_t *end)
{
	uint32_t ihl, tot_len;
	uint16_t frag;

	if (avail < IPV4_MIN_HLEN)
		return PKT_ERR_IP_HEADER;	/* shorter than the fixed header */
	ihl = (uint32_t)(b[0] & 0x0f) * 4;
	if (ihl < IPV4_MIN_HLEN || ihl > avail)
		return PKT_ERR_IP_HEADER;	/* IHL below 5 words or past the buffer */
	tot_len = be16(b + 2);
	if (tot_len < ihl || tot_len > len)
		return PKT_ERR_IP_LENGTH;	/* total length shorter than its header, or longer than what arrived */
	frag = be16(b + 6);
	if (frag & 0x3fff)
		return PKT_SKIP_FRAGMENT;	/* MF set or non-zero offset: no complete TCP header to trust */
	if (b[9] != IPPROTO_TCP_)
		return PKT_SKIP_NOT_TCP;
	p->family = 4;
	p->addr_len = 4;
	memcpy(p->src, b + 12, 4);
	memcpy(p->dst, b + 16, 4);
	*l4 = ihl;
	*end = tot_len;
	return PKT_OK;
}

static enum pkt_result parse_ipv6(const uint8_t *b, size_t avail, size_t len, struct pkt *p, uint32_t *l4,
				  uint32_t *end)
{
	uint32_t payload_len, off = IPV6_HLEN, hdrlen;
	uint8_t next;
	int i;

	if (avail < IPV6_HLEN)
		return PKT_ERR_IP_HEADER;
	payload_len = be16(b + 4);
	if (payload_len == 0)
		return PKT_SKIP_JUMBO;	/* jumbogram or BIG TCP: length lives elsewhere */
	if (IPV6_HLEN + payload_len > len)
		return PKT_ERR_IP_LENGTH;	/* payload length runs past what arrived */
	*end = IPV6_HLEN + payload_len;
	next = b[6];
	for (i = 0; i < IPV6_MAX_EXT_HEADERS; i++) {
		switch (next) {
		case IPPROTO_TCP_:
			p->family = 6;
			p->addr_len = 16;
			memcpy(p->src, b + 8, 16);
			memcpy(p->dst, b + 24, 16);
			*l4 = off;
			return PKT_OK;
		case IPPROTO_FRAGMENT_:
			return PKT_SKIP_FRAGMENT;
		case IPPROTO_HOPOPTS_:
		case IPPROTO_ROUTING_:
		case IPPROTO_DSTOPTS_:
		case IPPROTO_AH_:
			if (off + 8 > *end)
				return PKT_ERR_IPV6_EXT;	/* extension header cut short */
			if (off + 8 > avail)
				return PKT_ERR_IP_HEADER;	/* past the copy (only with headers copied) */
			if (next == IPPROTO_AH_)
				hdrlen = ((uint32_t)b[off + 1] + 2) * 4;
			else
				hdrlen = ((uint32_t)b[off + 1] + 1) * 8;
			if (off + hdrlen > *end)
				return PKT_ERR_IPV6_EXT;	/* claims more than the payload holds */
			next = b[off];
			off += hdrlen;
			break;
		default:
			return PKT_SKIP_NOT_TCP;
		}
	}
	return PKT_ERR_IPV6_EXT;	/* a chain this long is an attack, not a packet */
}

static enum pkt_result parse_options(const uint8_t *b, uint32_t start, uint32_t stop, struct pkt *p)
{
	uint32_t i = start, olen;
	uint8_t kind;
	int n;

	while (i < stop) {
		kind = b[i];
		if (kind == TCPOPT_EOL)
			break;
		if (kind == TCPOPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= stop)
			return PKT_ERR_TCP_OPTION;	/* kind without a length byte */
		olen = b[i + 1];
		if (olen < 2 || i + olen > stop)
			return PKT_ERR_TCP_OPTION;	/* length too small to be one, or past the header */
		switch (kind) {
		case TCPOPT_MSS:
			if (olen != 4)
				return PKT_ERR_TCP_OPTION;
			p->has_mss = true;
			p->mss = be16(b + i + 2);
			break;
		case TCPOPT_WSCALE:
			if (olen != 3)
				return PKT_ERR_TCP_OPTION;
			p->has_wscale = true;
			p->wscale = b[i + 2] > 14 ? 14 : b[i + 2];	/* RFC 7323 2.3: use 14 */
			break;
		case TCPOPT_SACK_PERM:
			if (olen != 2)
				return PKT_ERR_TCP_OPTION;
			p->sack_permitted = true;
			break;
		case TCPOPT_TIMESTAMP:
			if (olen != 10)
				return PKT_ERR_TCP_OPTION;
			p->has_ts = true;
			p->ts_opt_off = (uint16_t)i;
			p->tsval = be32(b + i + 2);
			p->tsecr = be32(b + i + 6);
			break;
		case TCPOPT_SACK:
			if (olen < 10 || (olen - 2) % 8 != 0 || (olen - 2) / 8 > PKT_MAX_SACK)
				return PKT_ERR_TCP_OPTION;	/* not a whole number of 8-byte blocks */
			if (p->sack_opt_off)
				return PKT_ERR_TCP_OPTION;	/* two SACK options: which one is true? */
			p->sack_opt_off = (uint16_t)i;
			p->sack_opt_len = (uint8_t)olen;
			p->nsack = (uint8_t)((olen - 2) / 8);
			for (n = 0; n < p->nsack; n++) {
				p->sack[n].start = be32(b + i + 2 + 8 * n);
				p->sack[n].end = be32(b + i + 6 + 8 * n);
			}
			break;
		default:
			break;	/* unknown kinds are skipped by their length */
		}
		i += olen;
	}
	return PKT_OK;
}

static enum pkt_result parse(const uint8_t *buf, size_t avail, size_t len, struct pkt *p, bool *short_copy)
{
	uint32_t l4 = 0, end = 0, doff;
	enum pkt_result r;

	memset(p, 0, sizeof(*p));
	*short_copy = false;
	if (len == 0 || avail == 0)
		return PKT_ERR_EMPTY;
	if (len > UINT32_MAX)
		return PKT_ERR_IP_LENGTH;
	switch (buf[0] >> 4) {
	case 4:
		r = parse_ipv4(buf, avail, len, p, &l4, &end);
		break;
	case 6:
		r = parse_ipv6(buf, avail, len, p, &l4, &end);
		break;
	default:
		return PKT_ERR_IP_VERSION;
	}
	if (r == PKT_ERR_IP_HEADER && avail < len)
		*short_copy = true;
	if (r != PKT_OK)
		return r;
	if (end - l4 < TCP_MIN_HLEN)
		return PKT_ERR_TCP_TRUNCATED;	/* no room for the fixed TCP header */
	if (l4 + TCP_MIN_HLEN > avail) {
		*short_copy = true;
		return PKT_ERR_TCP_TRUNCATED;	/* the copy ends before the fixed TCP header does */
	}
	doff = (uint32_t)(buf[l4 + 12] >> 4) * 4;
	if (doff < TCP_MIN_HLEN || doff > end - l4)
		return PKT_ERR_TCP_DOFF;	/* data offset inside the fixed header, or past the packet */
	if (l4 + doff > avail) {
		*short_copy = true;
		return PKT_ERR_TCP_TRUNCATED;	/* the copy ends inside the TCP options */
	}
	p->data = buf;
	p->len = end;
	p->captured = end < avail ? end : (uint32_t)avail;
	p->tcp_off = (uint16_t)l4;
	p->sport = be16(buf + l4);
	p->dport = be16(buf + l4 + 2);
	p->seq = be32(buf + l4 + 4);
	p->ack = be32(buf + l4 + 8);
	p->flags = buf[l4 + 13];
	p->window = be16(buf + l4 + 14);
	p->tcp_hlen = (uint16_t)doff;
	p->payload_off = l4 + doff;
	p->payload_len = end - l4 - doff;
	r = parse_options(buf, l4 + TCP_MIN_HLEN, l4 + doff, p);
	if (r != PKT_OK)
		p->data = NULL;
	return r;
}

enum pkt_result pkt_parse(const uint8_t *buf, size_t len, struct pkt *p)
{
	bool short_copy;

	return parse(buf, len, len, p, &short_copy);
}

enum pkt_result pkt_parse_headers(const uint8_t *buf, size_t captured, size_t full_len, struct pkt *p,
				  bool *short_copy)
{
	/* a copy longer than the packet is the packet */
	return parse(buf, captured < full_len ? captured : full_len, full_len, p, short_copy);
}
