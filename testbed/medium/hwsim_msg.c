// SPDX-License-Identifier: GPL-2.0
/*
 * hwsim generic netlink messages (see hwsim_msg.h).
 */
#include "hwsim_msg.h"

#include <stddef.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

const char *const hwsim_reject_names[HWSIM_REJECT_COUNT] = {
	[HWSIM_OK] = "ok",
	[HWSIM_REJECT_TRUNCATED] = "truncated",
	[HWSIM_REJECT_FAMILY] = "family",
	[HWSIM_REJECT_COMMAND] = "command",
	[HWSIM_REJECT_ATTRIBUTES] = "attributes",
	[HWSIM_REJECT_MISSING] = "missing",
	[HWSIM_REJECT_ATTR_LENGTH] = "attr_length",
	[HWSIM_REJECT_FRAME_LENGTH] = "frame_length",
};

#define GENL_HDR_ALIGNED MNL_ALIGN(sizeof(struct genlmsghdr))

/* Sizes of the attributes that have one; 0: variable (frame, name). */
static const uint16_t attr_size[HWSIM_ATTR_MAX_KNOWN + 1] = {
	[HWSIM_ATTR_ADDR_RECEIVER] = ETH_ALEN_,
	[HWSIM_ATTR_ADDR_TRANSMITTER] = ETH_ALEN_,
	[HWSIM_ATTR_FLAGS] = 4,
	[HWSIM_ATTR_RX_RATE] = 4,
	[HWSIM_ATTR_SIGNAL] = 4,
	[HWSIM_ATTR_TX_INFO] = TX_MAX_RATES * 2,	/* struct hwsim_tx_rate: s8 idx, u8 count */
	[HWSIM_ATTR_COOKIE] = 8,
	[HWSIM_ATTR_FREQ] = 4,
	[HWSIM_ATTR_TX_INFO_FLAGS] = TX_MAX_RATES * 3,	/* struct hwsim_tx_rate_flag: s8 idx, u16 flags, packed */
};

struct attr_table {
	const struct nlattr *tb[HWSIM_ATTR_MAX_KNOWN + 1];
};

/*
 * Walk the attributes after the genl header.  libmnl's iterator stops
 * quietly at an attribute that overruns the message; here that, and any
 * bytes left over, refuse the whole message.
 */
static enum hwsim_reject collect_attrs(const struct nlmsghdr *nlh, struct attr_table *t)
{
	const char *pos = (const char *)mnl_nlmsg_get_payload_offset(nlh, GENL_HDR_ALIGNED);
	const char *end = (const char *)mnl_nlmsg_get_payload_tail(nlh);

	while (end - pos >= (ptrdiff_t)sizeof(struct nlattr)) {
		const struct nlattr *attr = (const struct nlattr *)pos;
		uint16_t type = mnl_attr_get_type(attr);
		size_t step;

		if (attr->nla_len < sizeof(*attr) || attr->nla_len > end - pos)
			return HWSIM_REJECT_ATTRIBUTES;
		/* newer kernels add attributes: not ours to judge */
		if (type <= HWSIM_ATTR_MAX_KNOWN) {
			if (attr_size[type] && mnl_attr_get_payload_len(attr) != attr_size[type])
				return HWSIM_REJECT_ATTR_LENGTH;
			t->tb[type] = attr;
		}
		step = MNL_ALIGN((size_t)attr->nla_len);
		pos += step < (size_t)(end - pos) ? step : (size_t)(end - pos);	/* the last may be unpadded */
	}
	return pos == end ? HWSIM_OK : HWSIM_REJECT_ATTRIBUTES;
}

static enum hwsim_reject parse_frame(const struct attr_table *t, struct hwsim_msg *out)
{
	struct hwsim_frame_msg *f = &out->frame;
	const uint8_t *info;
	unsigned int i;

	if (!t->tb[HWSIM_ATTR_ADDR_TRANSMITTER] || !t->tb[HWSIM_ATTR_COOKIE])
		return HWSIM_REJECT_MISSING;
	memcpy(f->transmitter, mnl_attr_get_payload(t->tb[HWSIM_ATTR_ADDR_TRANSMITTER]), ETH_ALEN_);
	f->cookie = mnl_attr_get_u64(t->tb[HWSIM_ATTR_COOKIE]);
	out->has_cookie = true;	/* from here on, a refusal can still be answered */
	if (!t->tb[HWSIM_ATTR_FRAME] || !t->tb[HWSIM_ATTR_FLAGS] || !t->tb[HWSIM_ATTR_TX_INFO])
		return HWSIM_REJECT_MISSING;
	f->flags = mnl_attr_get_u32(t->tb[HWSIM_ATTR_FLAGS]);
	f->frame_len = mnl_attr_get_payload_len(t->tb[HWSIM_ATTR_FRAME]);
	f->frame = mnl_attr_get_payload(t->tb[HWSIM_ATTR_FRAME]);
	if (f->frame_len < FRAME_MIN_BYTES || f->frame_len > FRAME_MAX_BYTES)
		return HWSIM_REJECT_FRAME_LENGTH;
	f->freq_mhz = t->tb[HWSIM_ATTR_FREQ] ? mnl_attr_get_u32(t->tb[HWSIM_ATTR_FREQ]) : 0;
	info = mnl_attr_get_payload(t->tb[HWSIM_ATTR_TX_INFO]);
	for (i = 0; i < TX_MAX_RATES; i++) {
		f->rates[i].idx = (int8_t)info[2 * i];
		f->rates[i].count = info[2 * i + 1];
	}
	if (t->tb[HWSIM_ATTR_TX_INFO_FLAGS]) {
		info = mnl_attr_get_payload(t->tb[HWSIM_ATTR_TX_INFO_FLAGS]);
		for (i = 0; i < TX_MAX_RATES; i++) {
			uint16_t flags;

			memcpy(&flags, info + 3 * i + 1, sizeof(flags));	/* packed: unaligned */
			f->rate_flags[i] = flags;
		}
		f->has_rate_flags = true;
	}
	return HWSIM_OK;
}

enum hwsim_reject hwsim_parse(const void *buf, size_t len, uint16_t family, struct hwsim_msg *out, size_t *used)
{
	const struct nlmsghdr *nlh = buf;
	const struct genlmsghdr *genl;
	struct attr_table t = { 0 };
	enum hwsim_reject why;
	uint8_t cmd;

	memset(out, 0, sizeof(*out));
	*used = 0;
	/* The length field must cover the headers and lie within the buffer. */
	if (len < sizeof(*nlh) || nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > len)
		return HWSIM_REJECT_TRUNCATED;
	*used = MNL_ALIGN(nlh->nlmsg_len) < len ? MNL_ALIGN(nlh->nlmsg_len) : len;
	out->seq = nlh->nlmsg_seq;
	if (nlh->nlmsg_type == NLMSG_DONE) {
		out->kind = HWSIM_MSG_DONE;
		return HWSIM_OK;
	}
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);

		if (mnl_nlmsg_get_payload_len(nlh) < sizeof(err->error))
			return HWSIM_REJECT_TRUNCATED;
		out->kind = HWSIM_MSG_ERROR;
		out->error = err->error;
		return HWSIM_OK;
	}
	if (nlh->nlmsg_type != family)
		return HWSIM_REJECT_FAMILY;
	if (mnl_nlmsg_get_payload_len(nlh) < GENL_HDR_ALIGNED)
		return HWSIM_REJECT_TRUNCATED;
	genl = mnl_nlmsg_get_payload(nlh);
	cmd = genl->cmd;
	if (cmd != HWSIM_CMD_FRAME && cmd != HWSIM_CMD_ADD_MAC_ADDR && cmd != HWSIM_CMD_DEL_MAC_ADDR)
		return HWSIM_REJECT_COMMAND;
	why = collect_attrs(nlh, &t);
	if (why != HWSIM_OK)
		return why;
	if (cmd == HWSIM_CMD_FRAME) {
		out->kind = HWSIM_MSG_FRAME;
		return parse_frame(&t, out);
	}
	if (!t.tb[HWSIM_ATTR_ADDR_TRANSMITTER] || !t.tb[HWSIM_ATTR_ADDR_RECEIVER])
		return HWSIM_REJECT_MISSING;
	out->kind = cmd == HWSIM_CMD_ADD_MAC_ADDR ? HWSIM_MSG_ADD_MAC : HWSIM_MSG_DEL_MAC;
	memcpy(out->mac_transmitter, mnl_attr_get_payload(t.tb[HWSIM_ATTR_ADDR_TRANSMITTER]), ETH_ALEN_);
	memcpy(out->mac_receiver, mnl_attr_get_payload(t.tb[HWSIM_ATTR_ADDR_RECEIVER]), ETH_ALEN_);
	return HWSIM_OK;
}

static int find_family_id(const struct nlattr *attr, void *data)
{
	uint16_t *id = data;

	if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_ID && mnl_attr_get_payload_len(attr) == sizeof(uint16_t))
		*id = mnl_attr_get_u16(attr);
	return MNL_CB_OK;
}

uint16_t hwsim_parse_family_reply(const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	uint16_t id = 0;

	if (len < sizeof(*nlh) || nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > len)
		return 0;
	if (nlh->nlmsg_type != GENL_ID_CTRL || mnl_nlmsg_get_payload_len(nlh) < GENL_HDR_ALIGNED)
		return 0;
	if (mnl_attr_parse(nlh, GENL_HDR_ALIGNED, find_family_id, &id) < 0)
		return 0;
	return id;
}

/* ---------------------------------------------------------------- building */

static struct nlmsghdr *start(void *buf, size_t cap, uint16_t type, uint16_t flags, uint32_t seq, uint8_t cmd)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *genl;

	if (cap < MNL_NLMSG_HDRLEN + GENL_HDR_ALIGNED)
		return NULL;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = 1;
	return nlh;
}

size_t hwsim_build_getfamily(void *buf, size_t cap, uint32_t seq)
{
	struct nlmsghdr *nlh = start(buf, cap, GENL_ID_CTRL, NLM_F_ACK, seq, CTRL_CMD_GETFAMILY);

	if (!nlh || !mnl_attr_put_strz_check(nlh, cap, CTRL_ATTR_FAMILY_NAME, HWSIM_FAMILY_NAME))
		return 0;
	return nlh->nlmsg_len;
}

size_t hwsim_build_register(void *buf, size_t cap, uint16_t family, uint32_t seq)
{
	struct nlmsghdr *nlh = start(buf, cap, family, NLM_F_ACK, seq, HWSIM_CMD_REGISTER);

	return nlh ? nlh->nlmsg_len : 0;
}

size_t hwsim_build_new_radio(void *buf, size_t cap, uint16_t family, uint32_t seq, const char *name,
			     const uint8_t addr[ETH_ALEN_])
{
	struct nlmsghdr *nlh = start(buf, cap, family, NLM_F_ACK, seq, HWSIM_CMD_NEW_RADIO);

	/* Gone with our socket: a medium that dies takes its radios along. */
	if (!nlh || !mnl_attr_put_check(nlh, cap, HWSIM_ATTR_DESTROY_RADIO_ON_CLOSE, 0, NULL) ||
	    !mnl_attr_put_check(nlh, cap, HWSIM_ATTR_NO_VIF, 0, NULL) ||
	    !mnl_attr_put_check(nlh, cap, HWSIM_ATTR_PERM_ADDR, ETH_ALEN_, addr) ||
	    !mnl_attr_put_check(nlh, cap, HWSIM_ATTR_RADIO_NAME, strlen(name), name))
		return 0;
	return nlh->nlmsg_len;
}

size_t hwsim_build_tx_info(void *buf, size_t cap, uint16_t family, uint32_t seq, const struct hwsim_frame_msg *f,
			   const struct tx_rate_entry reported[TX_MAX_RATES], bool acked, int32_t signal_dbm)
{
	struct nlmsghdr *nlh = start(buf, cap, family, 0, seq, HWSIM_CMD_TX_INFO_FRAME);
	uint8_t info[TX_MAX_RATES * 2], info_flags[TX_MAX_RATES * 3];
	uint32_t flags = f->flags & ~HWSIM_TX_STAT_ACK;
	unsigned int i;

	if (acked)
		flags |= HWSIM_TX_STAT_ACK;
	for (i = 0; i < TX_MAX_RATES; i++) {
		info[2 * i] = (uint8_t)reported[i].idx;
		info[2 * i + 1] = reported[i].count;
		info_flags[3 * i] = (uint8_t)reported[i].idx;
		memcpy(info_flags + 3 * i + 1, &f->rate_flags[i], sizeof(uint16_t));
	}
	if (!nlh || !mnl_attr_put_check(nlh, cap, HWSIM_ATTR_ADDR_TRANSMITTER, ETH_ALEN_, f->transmitter) ||
	    !mnl_attr_put_u32_check(nlh, cap, HWSIM_ATTR_FLAGS, flags) ||
	    !mnl_attr_put_u32_check(nlh, cap, HWSIM_ATTR_SIGNAL, (uint32_t)signal_dbm) ||
	    !mnl_attr_put_check(nlh, cap, HWSIM_ATTR_TX_INFO, sizeof(info), info) ||
	    !mnl_attr_put_check(nlh, cap, HWSIM_ATTR_TX_INFO_FLAGS, sizeof(info_flags), info_flags) ||
	    !mnl_attr_put_u64_check(nlh, cap, HWSIM_ATTR_COOKIE, f->cookie))
		return 0;
	return nlh->nlmsg_len;
}

size_t hwsim_build_frame(void *buf, size_t cap, uint16_t family, uint32_t seq, const uint8_t receiver[ETH_ALEN_],
			 const uint8_t *frame, uint32_t frame_len, uint32_t rx_rate_idx, int32_t signal_dbm,
			 uint32_t freq_mhz)
{
	struct nlmsghdr *nlh = start(buf, cap, family, 0, seq, HWSIM_CMD_FRAME);

	if (!nlh || !mnl_attr_put_check(nlh, cap, HWSIM_ATTR_ADDR_RECEIVER, ETH_ALEN_, receiver) ||
	    !mnl_attr_put_check(nlh, cap, HWSIM_ATTR_FRAME, frame_len, frame) ||
	    !mnl_attr_put_u32_check(nlh, cap, HWSIM_ATTR_RX_RATE, rx_rate_idx) ||
	    !mnl_attr_put_u32_check(nlh, cap, HWSIM_ATTR_SIGNAL, (uint32_t)signal_dbm) ||
	    (freq_mhz && !mnl_attr_put_u32_check(nlh, cap, HWSIM_ATTR_FREQ, freq_mhz)))
		return 0;
	return nlh->nlmsg_len;
}
