// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: arqd's frame codec and both state machines, a sender
 * and a receiver back to back over a link the input drives.
 *
 * Byte 0 chooses the set-up: bit 0 resequencing, bit 1 per-frame acks (else
 * status frames), bit 2 fragmentation (40-byte fragments), bit 3 a forger
 * on the link, bit 4 idle_repair, bits 5-6 max_rtx, bit 7 ack_delay (2 ms,
 * with per-frame acks); timer_restart on inputs of odd length (the byte is
 * full).  Then records, each an
 * op byte and an argument byte (a forged frame also its bytes):
 *
 *   op & 7 = 0  submit a packet of 8 + 6 x arg bytes to the sender
 *            1  the sender puts up to arg frames on the data wire
 *            2  the data frame at arg (mod the wire's length) reaches the receiver
 *            3  ... the feedback frame at arg reaches the sender
 *            4  the data frame at arg is lost;  5  the feedback frame at arg is lost
 *            6  the clock moves on 100 us x arg, due timers run; with op
 *               bit 7 first a data frame of the other direction leaves,
 *               carrying the receiver's waiting ack, on the feedback wire
 *            7  with the forger: a frame of arg bytes from the input, its CRC
 *               made right, to the receiver (op bit 3 clear) or the sender
 *   op bit 4: the frame is delivered twice (duplication);  op bit 5: one bit
 *   of it is flipped first (corruption: the CRC is left as it was, so the
 *   parser must refuse it);  op bit 6 with 7: the CRC is not made right.
 *
 * The wire reorders at will but loses a frame once MAX_AGE newer frames
 * went on it (a link's bounded delay: without it, frames of a sender older
 * than two receive windows are indistinguishable from a restarted sender's).
 *
 * Every step must keep the promises: a frame the parser accepts survives a
 * rebuild byte for byte; the buffers stay within their bounds (rx_buffer,
 * tx_buffer, the windows).  Without the forger every packet delivered is
 * one the sender was given, intact (its checksum), and delivered once (in
 * order when resequencing); with it, every packet delivered is made of the
 * payloads of data frames that reached the receiver (a whole frame, or
 * fragments of one packet id and count in index order).  Anything else, a
 * crash, a leak or a sanitizer report, fails.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arq_frame.h"
#include "arq_rx.h"
#include "arq_tx.h"

#include "promise.h"

#define WIRE_MAX 128
#define MAX_AGE 32
#define MAX_PACKETS 512
#define MAX_SEEN 1024
#define FRAME_MAX 2048
#define RX_WINDOW 64
#define RX_BUFFER 2048

struct wire {
	uint8_t buf[WIRE_MAX][FRAME_MAX];
	size_t len[WIRE_MAX];
	uint64_t serial[WIRE_MAX];
	int n;
	uint64_t pushed;
};

/* a data frame payload that reached the receiver (what the forger check builds packets from) */
struct seen_frame {
	uint32_t seq;
	uint16_t pkt_id;
	uint8_t index, count;
	uint16_t len;
	uint8_t data[FRAME_MAX];
};

struct link {
	struct arq_tx tx;
	struct arq_rx rx;
	struct wire data, fb;
	bool forger, resequence;
	uint32_t submitted;		/* packets given to the sender */
	uint8_t delivered[MAX_PACKETS];	/* times each was delivered */
	int64_t last_delivered;		/* resequencing: ids go up */
	struct seen_frame seen[MAX_SEEN];
	uint32_t nseen;
};

static struct link L;

static uint32_t checksum(const uint8_t *p, size_t len)
{
	return arq_crc32c(0, p, len);
}

/* packet id: 4 bytes of id, filler, 4 bytes of checksum over the rest */
static size_t make_packet(uint8_t *p, uint32_t id, size_t len)
{
	uint32_t c;
	size_t i;

	memcpy(p, &id, 4);
	for (i = 4; i < len - 4; i++)
		p[i] = (uint8_t)(id * 31 + i);
	c = checksum(p, len - 4);
	memcpy(p + len - 4, &c, 4);
	return len;
}

static void wire_push(struct wire *w, const uint8_t *b, size_t len)
{
	int i, k = 0;

	PROMISE(len <= FRAME_MAX);
	w->pushed++;
	/* a frame MAX_AGE pushes old is lost: the link's delay is bounded */
	for (i = 0; i < w->n; i++) {
		if (w->serial[i] + MAX_AGE < w->pushed)
			continue;
		if (k != i) {
			memcpy(w->buf[k], w->buf[i], w->len[i]);
			w->len[k] = w->len[i];
			w->serial[k] = w->serial[i];
		}
		k++;
	}
	w->n = k;
	if (w->n == WIRE_MAX)
		return;
	memcpy(w->buf[w->n], b, len);
	w->len[w->n] = len;
	w->serial[w->n] = w->pushed;
	w->n++;
}

/* take the frame at i off the wire into out; its length */
static size_t wire_take(struct wire *w, int i, uint8_t *out)
{
	size_t len = w->len[i];

	memcpy(out, w->buf[i], len);
	for (; i + 1 < w->n; i++) {
		memcpy(w->buf[i], w->buf[i + 1], w->len[i + 1]);
		w->len[i] = w->len[i + 1];
		w->serial[i] = w->serial[i + 1];
	}
	w->n--;
	return len;
}

/* Can the delivered bytes be cut into seen fragments index..count-1 of one packet? */
static bool fragments_make(const uint8_t *p, size_t len, uint32_t first_seq, uint16_t pkt_id, uint8_t index,
			   uint8_t count, int depth)
{
	uint32_t i;

	if (index == count)
		return len == 0;
	if (depth > 255)
		return false;
	for (i = 0; i < L.nseen; i++) {
		const struct seen_frame *s = &L.seen[i];

		if (s->count == count && s->pkt_id == pkt_id && s->index == index && s->seq - index == first_seq &&
		    s->len <= len && memcmp(s->data, p, s->len) == 0 &&
		    fragments_make(p + s->len, len - s->len, first_seq, pkt_id, index + 1, count, depth + 1))
			return true;
	}
	return false;
}

static bool made_of_seen_frames(const uint8_t *p, size_t len)
{
	uint32_t i;

	for (i = 0; i < L.nseen; i++) {
		const struct seen_frame *s = &L.seen[i];

		if (!s->count && s->len == len && memcmp(s->data, p, len) == 0)
			return true;
		if (s->count && s->index == 0 && s->len <= len && memcmp(s->data, p, s->len) == 0 &&
		    fragments_make(p + s->len, len - s->len, s->seq, s->pkt_id, 1, s->count, 0))
			return true;
	}
	return false;
}

static void deliver(void *ctx, const uint8_t *pkt, size_t len)
{
	uint32_t id, c;

	(void)ctx;
	PROMISE(pkt && len > 0 && len <= 65535);
	if (L.forger) {
		if (!made_of_seen_frames(pkt, len) && getenv("FUZZ_ARQ_VERBOSE")) {
			fprintf(stderr, "delivered %zu bytes: %02x %02x %02x %02x ...\n", len, pkt[0], len > 1 ? pkt[1] : 0,
				len > 2 ? pkt[2] : 0, len > 3 ? pkt[3] : 0);
			for (uint32_t i = 0; i < L.nseen; i++)
				fprintf(stderr, "  seen seq %u id %u frag %u/%u len %u: %02x %02x\n", L.seen[i].seq,
					L.seen[i].pkt_id, L.seen[i].index, L.seen[i].count, L.seen[i].len, L.seen[i].data[0],
					L.seen[i].len > 1 ? L.seen[i].data[1] : 0);
		}
		PROMISE(made_of_seen_frames(pkt, len));
		return;
	}
	/* an honest link: a packet the sender was given, intact, once */
	PROMISE(len >= 8);
	memcpy(&id, pkt, 4);
	memcpy(&c, pkt + len - 4, 4);
	PROMISE(id < L.submitted && c == checksum(pkt, len - 4));
	PROMISE(L.delivered[id] == 0);
	L.delivered[id]++;
	if (L.resequence) {
		PROMISE((int64_t)id > L.last_delivered);
		L.last_delivered = id;
	}
}

static void feedback(void *ctx, const struct arq_frame *f)
{
	uint8_t buf[FRAME_MAX];
	size_t n = arq_frame_build(buf, sizeof(buf), f);

	(void)ctx;
	PROMISE(n > 0);
	wire_push(&L.fb, buf, n);
}

/* What the parser accepts must rebuild to the same bytes (a padded short frame: its start). */
static bool parse(const uint8_t *b, size_t len, struct arq_frame *f)
{
	static uint8_t rebuilt[70000];
	size_t n;

	if (arq_frame_parse(b, len, f) != ARQ_OK)
		return false;
	n = arq_frame_build(rebuilt, sizeof(rebuilt), f);
	PROMISE(n && n <= len && memcmp(rebuilt, b, n) == 0);
	return true;
}

static void to_rx(const uint8_t *b, size_t len, uint64_t now)
{
	struct arq_frame f;

	if (!parse(b, len, &f) || f.type != ARQ_DATA)
		return;
	/* with the forger, a frame not on record could not be checked: the link goes no further */
	if (L.forger && L.nseen == MAX_SEEN)
		return;
	if (L.forger) {
		struct seen_frame *s = &L.seen[L.nseen++];

		s->seq = f.seq;
		s->pkt_id = f.pkt_id;
		s->index = f.frag_index;
		s->count = f.frag_count;
		s->len = f.len;
		memcpy(s->data, f.payload, f.len);
	}
	arq_rx_on_data(&L.rx, &f, now);
	PROMISE(L.rx.bytes <= RX_BUFFER && L.rx.nheld <= RX_WINDOW);
}

static void to_tx(const uint8_t *b, size_t len, uint64_t now)
{
	struct arq_frame f;

	if (!parse(b, len, &f))
		return;
	arq_tx_heard(&L.tx, now);
	if (f.type == ARQ_DATA && f.flags & ARQ_F_ACK)
		arq_tx_on_carried_ack(&L.tx, f.ack_cum, now);
	else if (f.type == ARQ_ACK)
		arq_tx_on_ack(&L.tx, f.seq, f.aux, now);
	else if (f.type == ARQ_STATUS)
		arq_tx_on_status(&L.tx, f.seq, f.payload, f.len, now);
}

/* The CRC a frame of these bytes must carry (over the header but the CRC, and the body its length field names). */
static void make_crc_right(uint8_t *b, size_t len)
{
	size_t total;
	uint32_t crc;

	if (len < ARQ_HDR_LEN)
		return;
	total = ARQ_HDR_LEN + arq_fields_len(b[1]) + (size_t)(b[2] << 8 | b[3]);
	if (total > len)
		return;
	crc = arq_crc32c(arq_crc32c(0, b, 12), b + ARQ_HDR_LEN, total - ARQ_HDR_LEN);
	b[12] = (uint8_t)(crc >> 24);
	b[13] = (uint8_t)(crc >> 16);
	b[14] = (uint8_t)(crc >> 8);
	b[15] = (uint8_t)crc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arq_tx_params tp = { .window = 32, .buffer_bytes = 16384, .max_payload = 1500,
				    .rto_initial_ns = 1000000, .rto_min_ns = 1000000, .rto_max_ns = 100000000 };
	struct arq_rx_params rp = { .feedback = ARQ_FEEDBACK_STATUS, .window = RX_WINDOW, .buffer_bytes = RX_BUFFER,
				    .reseq_timeout_ns = 5000000, .status_interval_ns = 1000000, .status_max_bytes = 8,
				    .reasm_slots = 3, .reasm_timeout_ns = 10000000 };
	static uint8_t pkt[1600], frame[FRAME_MAX];
	uint64_t now = 1000000000;
	size_t pos = 1;

	if (size < 1)
		return 0;
	/* L is large (the wires, the frames seen): reset what says what is in it */
	L.data.n = L.fb.n = 0;
	L.data.pushed = L.fb.pushed = 0;
	L.submitted = 0;
	L.nseen = 0;
	memset(L.delivered, 0, sizeof(L.delivered));
	L.last_delivered = -1;
	L.resequence = rp.resequence = data[0] & 1;
	if (data[0] & 2)
		rp.feedback = ARQ_FEEDBACK_ACK;
	if (data[0] & 4)
		tp.frag_payload = 40;
	L.forger = data[0] & 8;
	tp.idle_repair = data[0] & 16;
	tp.timer_restart = size & 1;
	tp.max_rtx = (data[0] >> 5) & 3;
	rp.ack_delay_ns = data[0] & 0x80 ? 2000000 : 0;
	if (arq_tx_init(&L.tx, &tp) < 0 || arq_rx_init(&L.rx, &rp, deliver, feedback, NULL) < 0)
		__builtin_trap();
	while (pos + 2 <= size) {
		uint8_t op = data[pos], arg = data[pos + 1];
		struct arq_frame f;
		struct wire *w = NULL;
		size_t len = 0;
		int copies = op & 0x10 ? 2 : 1;

		pos += 2;
		switch (op & 7) {
		case 0:
			if (L.submitted < MAX_PACKETS && arq_tx_submit(&L.tx, pkt, make_packet(pkt, L.submitted, 8 + 6 * (size_t)arg)) == 0)
				L.submitted++;
			else if (L.submitted < MAX_PACKETS)
				L.submitted++;	/* dropped by the sender (full, too big): never delivered either */
			break;
		case 1:
			for (int i = 0; i < arg && arq_tx_peek(&L.tx, &f); i++) {
				len = arq_frame_build(frame, sizeof(frame), &f);
				PROMISE(len > 0);
				arq_tx_sent(&L.tx, now);
				wire_push(&L.data, frame, len);
			}
			break;
		case 2:
		case 3:
			w = (op & 7) == 2 ? &L.data : &L.fb;
			if (!w->n)
				break;
			len = wire_take(w, arg % w->n, frame);
			if (op & 0x20)
				frame[(arg * 7u) % len] ^= (uint8_t)(1u << (arg % 8));
			for (int i = 0; i < copies; i++)
				((op & 7) == 2 ? to_rx : to_tx)(frame, len, now);
			break;
		case 4:
		case 5:
			w = (op & 7) == 4 ? &L.data : &L.fb;
			if (w->n)
				wire_take(w, arg % w->n, frame);
			break;
		case 6:
			if (op & 0x80 && arq_rx_ack_waiting(&L.rx, &f.ack_cum)) {
				static const uint8_t other[8] = "other...";

				f = (struct arq_frame){ .type = ARQ_DATA, .flags = ARQ_F_ACK, .seq = 1, .aux = 1,
							.ack_cum = f.ack_cum, .payload = other, .len = sizeof(other) };
				len = arq_frame_build(frame, sizeof(frame), &f);
				PROMISE(len > 0);
				arq_rx_ack_carried(&L.rx);
				wire_push(&L.fb, frame, len);
			}
			now += (uint64_t)arg * 100000;
			break;
		case 7:
			if (!L.forger) {
				now += (uint64_t)arg * 1000000;
				break;
			}
			len = arg < size - pos ? arg : size - pos;
			memcpy(frame, data + pos, len);
			pos += len;
			if (!(op & 0x40))
				make_crc_right(frame, len);
			for (int i = 0; i < copies; i++)
				(op & 8 ? to_tx : to_rx)(frame, len, now);
			break;
		}
		if (arq_tx_deadline(&L.tx) && arq_tx_deadline(&L.tx) <= now)
			arq_tx_on_timer(&L.tx, now);
		if (arq_rx_deadline(&L.rx) && arq_rx_deadline(&L.rx) <= now)
			arq_rx_on_timer(&L.rx, now);
		PROMISE(arq_tx_outstanding(&L.tx) <= tp.window && L.tx.bytes <= tp.buffer_bytes);
		PROMISE(L.rx.bytes <= RX_BUFFER && L.rx.nheld <= RX_WINDOW);
	}
	arq_tx_free(&L.tx);
	arq_rx_free(&L.rx);
	return 0;
}
