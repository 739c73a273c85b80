/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arqd's link frames, carried in Ethernet frames of their own EtherType on
 * the wireless interface.  All fields in network byte order:
 *
 *    0  u8   version (high nibble, 1) | type (low nibble): 1 data, 2 ack, 3 status
 *    1  u8   flags: 0x01 fragment, 0x02 carried ack (data only); every
 *            other bit must be 0
 *    2  u16  length: data: payload bytes after the header (and carried ack
 *            and fragment header); status: bitmap bytes; ack: 0
 *    4  u32  seq: data: the frame's link sequence number; ack: the frame
 *            acknowledged; status: cum, the lowest frame not yet received
 *    8  u32  aux: data: the sender's base (it will never send a frame below
 *            it again: everything below was acknowledged or given up);
 *            ack: the receiver's cum (everything below received or given
 *            up); status: 0
 *   12  u32  CRC-32C of bytes 0..11 and of everything after the header
 *   16       data with the carried-ack flag: u32 the cum of the frame
 *            sender's receiver (every frame of the other direction below
 *            it received or given up), a link ack riding on data;
 *            then, with the fragment flag: u16 packet id, u8 index, u8 count
 *            status: bitmap, bit i (byte i / 8, least significant bit
 *            first) set if frame cum + 1 + i was received
 *
 * The CRC is there because netem (and a real radio without FCS checking)
 * delivers corrupted frames: a frame that fails any check is dropped and
 * counted by reason, never acted on.  The parser reads nothing beyond len.
 */
#ifndef ARQ_FRAME_H
#define ARQ_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARQ_ETHERTYPE 0x88B5	/* IEEE 802 local experimental EtherType 1 */
#define ARQ_VERSION 1
#define ARQ_HDR_LEN 16
#define ARQ_FRAG_HDR_LEN 4
#define ARQ_ACK_FIELD_LEN 4	/* a carried ack */
#define ARQ_ETH_HDR_LEN 14	/* counted as link overhead */
#define ARQ_MIN_ETH_PAYLOAD 46	/* a real Ethernet pads shorter frames: padding is tolerated below this */
#define ARQ_MAX_FRAME 65535

enum arq_type {
	ARQ_DATA = 1,
	ARQ_ACK = 2,
	ARQ_STATUS = 3,
};

#define ARQ_F_FRAG 0x01
#define ARQ_F_ACK 0x02

#define ARQ_PARSE_RESULTS(X)                                              \
	X(ARQ_OK, "ok")                                                   \
	X(ARQ_ERR_SHORT, "shorter than the header")                       \
	X(ARQ_ERR_VERSION, "unknown version")                             \
	X(ARQ_ERR_TYPE, "unknown frame type")                             \
	X(ARQ_ERR_FLAGS, "unknown flags, or a data-only flag on another frame") \
	X(ARQ_ERR_LENGTH, "length field does not match the frame")        \
	X(ARQ_ERR_CRC, "CRC mismatch (corrupted)")                        \
	X(ARQ_ERR_FIELD, "a field out of range (reserved non-zero, empty data, fragment index >= count)")

enum arq_parse_result {
#define ARQ_ENUM(name, desc) name,
	ARQ_PARSE_RESULTS(ARQ_ENUM)
#undef ARQ_ENUM
	ARQ__PARSE_COUNT
};

struct arq_frame {
	enum arq_type type;
	uint8_t flags;
	uint32_t seq;
	uint32_t aux;
	/* data */
	uint32_t ack_cum;		/* with ARQ_F_ACK: the carried ack */
	uint16_t pkt_id;
	uint8_t frag_index, frag_count;	/* 0, 0 when not a fragment */
	const uint8_t *payload;		/* data payload or status bitmap (points into the buffer) */
	uint16_t len;
};

const char *arq_parse_result_name(enum arq_parse_result r);

uint32_t arq_crc32c(uint32_t crc, const uint8_t *p, size_t len);

/* Parse buf (the Ethernet payload) into f; f->payload points into buf. */
enum arq_parse_result arq_frame_parse(const uint8_t *buf, size_t len, struct arq_frame *f);

/* Bytes arq_frame_build writes for f. */
size_t arq_frame_size(const struct arq_frame *f);

/* Write f (header, fragment header, payload, CRC) to out; returns the size, or 0 if cap is too small. */
size_t arq_frame_build(uint8_t *out, size_t cap, const struct arq_frame *f);

/*
 * The longest frame (header included) sent on an interface of MTU ifmtu:
 * link_mtu when it fragments below that MTU, else the MTU.  The pacer
 * lets two of these wait below arqd.
 */
static inline uint32_t arq_frame_max(uint32_t link_mtu, uint32_t ifmtu)
{
	return link_mtu && link_mtu < ifmtu ? link_mtu : ifmtu;
}

/* A data frame's fields between the header and the payload, for its flags. */
static inline size_t arq_fields_len(uint8_t flags)
{
	return (flags & ARQ_F_ACK ? ARQ_ACK_FIELD_LEN : 0) + (flags & ARQ_F_FRAG ? ARQ_FRAG_HDR_LEN : 0);
}

/* Serial-number comparisons (RFC 1982 style, 32 bits). */
static inline bool arq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool arq_after(uint32_t a, uint32_t b)
{
	return arq_before(b, a);
}

#endif
