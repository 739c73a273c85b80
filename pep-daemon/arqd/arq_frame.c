// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "arq_frame.h"

static const char *const result_names[ARQ__PARSE_COUNT] = {
	"ok", "short", "version", "type", "flags", "length", "crc", "field",
};

const char *arq_parse_result_name(enum arq_parse_result r)
{
	return (unsigned int)r < ARQ__PARSE_COUNT ? result_names[r] : "?";
}

/* CRC-32C (Castagnoli), reflected, table-driven. */
static uint32_t crc_table[256];

static void crc_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t arq_crc32c(uint32_t crc, const uint8_t *p, size_t len)
{
	if (!crc_table[1])
		crc_init();
	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t frame_crc(const uint8_t *buf, size_t total)
{
	uint32_t crc = arq_crc32c(0, buf, 12);

	return arq_crc32c(crc, buf + ARQ_HDR_LEN, total - ARQ_HDR_LEN);
}

enum arq_parse_result arq_frame_parse(const uint8_t *buf, size_t len, struct arq_frame *f)
{
	const uint8_t *fh;
	size_t body, total;
	uint8_t type;

	memset(f, 0, sizeof(*f));
	if (len < ARQ_HDR_LEN)
		return ARQ_ERR_SHORT;
	if (buf[0] >> 4 != ARQ_VERSION)
		return ARQ_ERR_VERSION;
	type = buf[0] & 0x0f;
	if (type < ARQ_DATA || type > ARQ_STATUS)
		return ARQ_ERR_TYPE;
	f->type = (enum arq_type)type;
	f->flags = buf[1];
	/* a data-only flag anywhere but on data would make the lengths lie */
	if (f->flags & ~(ARQ_F_FRAG | ARQ_F_ACK) || (f->flags && f->type != ARQ_DATA))
		return ARQ_ERR_FLAGS;
	f->len = get16(buf + 2);
	f->seq = get32(buf + 4);
	f->aux = get32(buf + 8);
	body = arq_fields_len(f->flags) + f->len;
	total = ARQ_HDR_LEN + body;
	/* exact, except the padding a real Ethernet adds to short frames */
	if (total > len || (total < len && len > ARQ_MIN_ETH_PAYLOAD))
		return ARQ_ERR_LENGTH;
	if (f->type == ARQ_ACK && f->len != 0)
		return ARQ_ERR_LENGTH;
	if (frame_crc(buf, total) != get32(buf + 12))
		return ARQ_ERR_CRC;
	if (f->type == ARQ_STATUS && f->aux != 0)
		return ARQ_ERR_FIELD;
	/* the sender never sends an empty packet: one would go up as nothing (found by fuzz_arq_frame) */
	if (f->type == ARQ_DATA && f->len == 0)
		return ARQ_ERR_FIELD;
	fh = buf + ARQ_HDR_LEN;
	if (f->flags & ARQ_F_ACK) {
		f->ack_cum = get32(fh);
		fh += ARQ_ACK_FIELD_LEN;
	}
	if (f->flags & ARQ_F_FRAG) {
		f->pkt_id = get16(fh);
		f->frag_index = fh[2];
		f->frag_count = fh[3];
		/* a count of 1 is a whole packet: not sent as a fragment */
		if (f->frag_count < 2 || f->frag_index >= f->frag_count || f->len == 0)
			return ARQ_ERR_FIELD;
		f->payload = fh + ARQ_FRAG_HDR_LEN;
	} else {
		f->payload = fh;
	}
	return ARQ_OK;
}

size_t arq_frame_size(const struct arq_frame *f)
{
	return ARQ_HDR_LEN + arq_fields_len(f->flags) + f->len;
}

size_t arq_frame_build(uint8_t *out, size_t cap, const struct arq_frame *f)
{
	size_t total = arq_frame_size(f), off = ARQ_HDR_LEN;

	if (total > cap || total > ARQ_MAX_FRAME)
		return 0;
	out[0] = (uint8_t)(ARQ_VERSION << 4 | f->type);
	out[1] = f->flags;
	put16(out + 2, f->len);
	put32(out + 4, f->seq);
	put32(out + 8, f->aux);
	if (f->flags & ARQ_F_ACK) {
		put32(out + off, f->ack_cum);
		off += ARQ_ACK_FIELD_LEN;
	}
	if (f->flags & ARQ_F_FRAG) {
		put16(out + off, f->pkt_id);
		out[off + 2] = f->frag_index;
		out[off + 3] = f->frag_count;
		off += ARQ_FRAG_HDR_LEN;
	}
	if (f->len)
		memmove(out + off, f->payload, f->len);
	put32(out + 12, frame_crc(out, total));
	return total;
}
