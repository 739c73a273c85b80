// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: arqd's frame parser, and the state machines behind it.
 * The input is a sequence of frames, each preceded by a length byte.  A
 * frame the parser accepts must survive a rebuild byte for byte; data
 * frames go to a receiver, acks and status frames to a sender with frames
 * outstanding.  Anything but a clean run (crash, leak, sanitizer report,
 * a delivered packet that is not one the sender could have sent) fails.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arq_frame.h"
#include "arq_rx.h"
#include "arq_tx.h"

static void deliver(void *ctx, const uint8_t *pkt, size_t len)
{
	(void)ctx;
	if (!pkt || len > 65536)
		__builtin_trap();
}

static void feedback(void *ctx, const struct arq_frame *f)
{
	uint8_t buf[70000];

	(void)ctx;
	if (!arq_frame_build(buf, sizeof(buf), f))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct arq_tx_params tp = { .window = 64, .max_rtx = 2, .buffer_bytes = 1 << 20, .frag_payload = 40,
					  .max_payload = 1500, .rto_initial_ns = 1000000, .rto_min_ns = 1000000,
					  .rto_max_ns = 100000000 };
	struct arq_rx_params rp = { .feedback = ARQ_FEEDBACK_STATUS, .window = 64, .buffer_bytes = 1 << 16,
				    .reseq_timeout_ns = 5000000, .status_interval_ns = 1000000, .status_max_bytes = 8,
				    .reasm_slots = 2, .reasm_timeout_ns = 10000000 };
	static uint8_t rebuilt[70000];
	uint8_t pkt[100] = { 0 };
	struct arq_tx tx;
	struct arq_rx rx;
	struct arq_frame f;
	uint64_t now = 1000000000;
	size_t pos = 0;

	if (size && data[0] & 1)
		rp.resequence = true;
	if (size && data[0] & 2)
		rp.feedback = ARQ_FEEDBACK_ACK;
	if (arq_tx_init(&tx, &tp) < 0 || arq_rx_init(&rx, &rp, deliver, feedback, NULL) < 0)
		__builtin_trap();
	for (int i = 0; i < 8; i++)
		arq_tx_submit(&tx, pkt, 20 + (size_t)i * 10);
	while (arq_tx_peek(&tx, &f))
		arq_tx_sent(&tx, now);
	while (pos < size) {
		size_t len = data[pos++];

		if (len > size - pos)
			len = size - pos;
		if (arq_frame_parse(data + pos, len, &f) == ARQ_OK) {
			size_t n = arq_frame_build(rebuilt, sizeof(rebuilt), &f);

			/* exact, or the frame was padded */
			if (!n || n > len || memcmp(rebuilt, data + pos, n) != 0)
				__builtin_trap();
			if (f.type == ARQ_DATA)
				arq_rx_on_data(&rx, &f, now);
			else if (f.type == ARQ_ACK)
				arq_tx_on_ack(&tx, f.seq, f.aux, now);
			else
				arq_tx_on_status(&tx, f.seq, f.payload, f.len, now);
		}
		pos += len;
		now += 700000;
		if (arq_tx_deadline(&tx) && arq_tx_deadline(&tx) <= now)
			arq_tx_on_timer(&tx, now);
		if (arq_rx_deadline(&rx) && arq_rx_deadline(&rx) <= now)
			arq_rx_on_timer(&rx, now);
		while (arq_tx_peek(&tx, &f))
			arq_tx_sent(&tx, now);
		if (arq_tx_outstanding(&tx) > tp.window)
			__builtin_trap();
	}
	arq_tx_free(&tx);
	arq_rx_free(&rx);
	return 0;
}
