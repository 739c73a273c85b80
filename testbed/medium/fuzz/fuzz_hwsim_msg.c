// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: whatever the netlink socket may hand the medium.  The
 * input is a buffer of netlink messages; each goes through hwsim_parse()
 * and, when accepted as a frame, through the retry-chain walk with every
 * rate and flag the bytes say.  A message is either accepted with every
 * field inside the buffer or refused with a counted reason, and the
 * parser always moves forward.  ASan/UBSan catch the rest.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "hwsim_msg.h"
#include "lossmodel.h"

#define FAMILY 0x1d

static uint64_t rejects[HWSIM_REJECT_COUNT];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* netlink buffers are 4-byte aligned; so is this one */
	static uint32_t aligned[(65536 + 3) / 4];
	const char *buf = (const char *)aligned;
	struct lm_params model = { .kind = LM_UNIFORM, .p = 0.5, .seed = 1 };
	struct lm_state st;
	struct hwsim_msg msg;
	size_t off = 0, used;

	if (size > sizeof(aligned))
		return 0;
	memcpy(aligned, data, size);
	lm_init(&st, &model, 0, 1);
	(void)hwsim_parse_family_reply(buf, size);
	while (off < size) {
		enum hwsim_reject why = hwsim_parse(buf + off, size - off, FAMILY, &msg, &used);

		if (why != HWSIM_OK) {
			if (why >= HWSIM_REJECT_COUNT)
				abort();
			rejects[why]++;
		} else if (msg.kind == HWSIM_MSG_FRAME) {
			const struct hwsim_frame_msg *f = &msg.frame;
			struct frame_in in = { .freq_mhz = f->freq_mhz ? f->freq_mhz : 2412, .bytes = f->frame_len,
					       .no_ack = f->flags & HWSIM_TX_CTL_NO_ACK };
			struct frame_fate fate;

			/* the frame lies within the message */
			if ((const char *)f->frame < buf + off || (const char *)f->frame + f->frame_len > buf + off + used ||
			    f->frame_len < FRAME_MIN_BYTES || f->frame_len > FRAME_MAX_BYTES)
				abort();
			memcpy(in.rates, f->rates, sizeof(in.rates));
			memcpy(in.rate_flags, f->rate_flags, sizeof(in.rate_flags));
			decide_frame(&in, 0, f->flags & 0x1f, &st, &model, true, &fate);
			if (fate.attempts > TX_MAX_RATES * 255 || fate.attempts_lost > fate.attempts)
				abort();
		}
		if (!used)
			break;
		if (used > size - off)
			abort();
		off += used;
	}
	return 0;
}
