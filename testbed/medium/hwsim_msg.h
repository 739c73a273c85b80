/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mac80211_hwsim's generic netlink messages, parsed into plain structs and
 * built from them.  Pure: buffers in, buffers out; the socket lives in
 * medium.c.  Every message from the kernel goes through hwsim_parse(),
 * which checks every length before it reads and rejects (with a reason
 * the medium counts) whatever does not fit: fuzz/fuzz_hwsim_msg.c.
 *
 * The numbers are the kernel's ABI, copied from
 * drivers/net/wireless/mac80211_hwsim.h (not a uapi header).
 */
#ifndef AIRTCP_HWSIM_MSG_H
#define AIRTCP_HWSIM_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decide.h"

#define HWSIM_FAMILY_NAME "MAC80211_HWSIM"

enum {
	HWSIM_CMD_UNSPEC,
	HWSIM_CMD_REGISTER,
	HWSIM_CMD_FRAME,
	HWSIM_CMD_TX_INFO_FRAME,
	HWSIM_CMD_NEW_RADIO,
	HWSIM_CMD_DEL_RADIO,
	HWSIM_CMD_GET_RADIO,
	HWSIM_CMD_ADD_MAC_ADDR,
	HWSIM_CMD_DEL_MAC_ADDR,
};

enum {
	HWSIM_ATTR_UNSPEC,
	HWSIM_ATTR_ADDR_RECEIVER,
	HWSIM_ATTR_ADDR_TRANSMITTER,
	HWSIM_ATTR_FRAME,
	HWSIM_ATTR_FLAGS,
	HWSIM_ATTR_RX_RATE,
	HWSIM_ATTR_SIGNAL,
	HWSIM_ATTR_TX_INFO,
	HWSIM_ATTR_COOKIE,
	HWSIM_ATTR_CHANNELS,
	HWSIM_ATTR_RADIO_ID,
	HWSIM_ATTR_REG_HINT_ALPHA2,
	HWSIM_ATTR_REG_CUSTOM_REG,
	HWSIM_ATTR_REG_STRICT_REG,
	HWSIM_ATTR_SUPPORT_P2P_DEVICE,
	HWSIM_ATTR_USE_CHANCTX,
	HWSIM_ATTR_DESTROY_RADIO_ON_CLOSE,
	HWSIM_ATTR_RADIO_NAME,
	HWSIM_ATTR_NO_VIF,
	HWSIM_ATTR_FREQ,
	HWSIM_ATTR_PAD,
	HWSIM_ATTR_TX_INFO_FLAGS,
	HWSIM_ATTR_PERM_ADDR,
	HWSIM_ATTR_MAX_KNOWN = HWSIM_ATTR_PERM_ADDR,
};

/* HWSIM_ATTR_FLAGS */
#define HWSIM_TX_CTL_REQ_TX_STATUS	(1U << 0)
#define HWSIM_TX_CTL_NO_ACK		(1U << 1)
#define HWSIM_TX_STAT_ACK		(1U << 2)

#define ETH_ALEN_ 6
/* The shortest frame with a receiver address (an ACK: FC, duration, RA). */
#define FRAME_MIN_BYTES 10
/* Longer than any MPDU mac80211 hands a driver without A-MSDU (2352). */
#define FRAME_MAX_BYTES 4096

enum hwsim_msg_kind {
	HWSIM_MSG_FRAME,	/* a radio transmits */
	HWSIM_MSG_ADD_MAC,	/* a radio answers to one more address */
	HWSIM_MSG_DEL_MAC,
	HWSIM_MSG_ERROR,	/* netlink error/ack for something we sent */
	HWSIM_MSG_DONE,
};

/* Why a message was refused; counted per reason. */
enum hwsim_reject {
	HWSIM_OK,
	HWSIM_REJECT_TRUNCATED,		/* shorter than its headers, or its length field lies */
	HWSIM_REJECT_FAMILY,		/* not hwsim's family, not a netlink control message */
	HWSIM_REJECT_COMMAND,		/* a command the kernel never sends a medium */
	HWSIM_REJECT_ATTRIBUTES,	/* the attribute list overruns the message */
	HWSIM_REJECT_MISSING,		/* a required attribute is absent */
	HWSIM_REJECT_ATTR_LENGTH,	/* an attribute of the wrong size */
	HWSIM_REJECT_FRAME_LENGTH,	/* frame too short for a receiver address, or too long */
	HWSIM_REJECT_COUNT
};

extern const char *const hwsim_reject_names[HWSIM_REJECT_COUNT];

struct hwsim_frame_msg {
	uint8_t transmitter[ETH_ALEN_];
	const uint8_t *frame;		/* points into the parsed buffer */
	uint32_t frame_len;
	uint32_t flags;
	uint32_t freq_mhz;		/* 0: not given */
	uint64_t cookie;
	struct tx_rate_entry rates[TX_MAX_RATES];
	uint16_t rate_flags[TX_MAX_RATES];
	bool has_rate_flags;
};

struct hwsim_msg {
	enum hwsim_msg_kind kind;
	struct hwsim_frame_msg frame;	/* HWSIM_MSG_FRAME */
	uint8_t mac_transmitter[ETH_ALEN_];	/* HWSIM_MSG_ADD/DEL_MAC */
	uint8_t mac_receiver[ETH_ALEN_];
	int error;			/* HWSIM_MSG_ERROR: 0 ack, < 0 errno, > 0 a value (radio id) */
	uint32_t seq;
	bool has_cookie;		/* a refused frame that can still be answered */
};

/*
 * Parse the one netlink message at buf (len bytes available, which may
 * hold more messages after it).  On success *used is its aligned length.
 */
enum hwsim_reject hwsim_parse(const void *buf, size_t len, uint16_t family, struct hwsim_msg *out, size_t *used);

/* The family id in a CTRL_CMD_GETFAMILY reply; 0 if the message has none. */
uint16_t hwsim_parse_family_reply(const void *buf, size_t len);

/* Builders: each writes one message into buf (cap bytes) and returns its
 * length, or 0 if it does not fit.
 */
size_t hwsim_build_getfamily(void *buf, size_t cap, uint32_t seq);
size_t hwsim_build_register(void *buf, size_t cap, uint16_t family, uint32_t seq);
size_t hwsim_build_new_radio(void *buf, size_t cap, uint16_t family, uint32_t seq, const char *name,
			     const uint8_t addr[ETH_ALEN_]);
size_t hwsim_build_tx_info(void *buf, size_t cap, uint16_t family, uint32_t seq, const struct hwsim_frame_msg *f,
			   const struct tx_rate_entry reported[TX_MAX_RATES], bool acked, int32_t signal_dbm);
size_t hwsim_build_frame(void *buf, size_t cap, uint16_t family, uint32_t seq, const uint8_t receiver[ETH_ALEN_],
			 const uint8_t *frame, uint32_t frame_len, uint32_t rx_rate_idx, int32_t signal_dbm,
			 uint32_t freq_mhz);

#endif /* AIRTCP_HWSIM_MSG_H */
