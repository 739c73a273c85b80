// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>
#include <string.h>

#include "arq_rx.h"

#define SCRATCH_SIZE 65536

int arq_rx_init(struct arq_rx *rx, const struct arq_rx_params *p, arq_deliver_fn deliver, arq_feedback_fn feedback,
		void *ctx)
{
	memset(rx, 0, sizeof(*rx));
	rx->p = *p;
	rx->deliver = deliver;
	rx->feedback = feedback;
	rx->ctx = ctx;
	if (!p->window || p->window > (1u << 20) || !p->reasm_slots)
		return -1;
	rx->seen = calloc((p->window + 7) / 8, 1);
	rx->held = p->resequence ? calloc(p->window, sizeof(*rx->held)) : NULL;
	rx->reasm = calloc(p->reasm_slots, sizeof(*rx->reasm));
	rx->scratch = malloc(SCRATCH_SIZE);
	if (!rx->seen || (p->resequence && !rx->held) || !rx->reasm || !rx->scratch) {
		arq_rx_free(rx);
		return -1;
	}
	return 0;
}

static void reasm_release(struct arq_rx *rx, struct arq_reasm *r)
{
	uint32_t i;

	for (i = 0; i < r->count; i++) {
		rx->bytes -= r->flen[i];
		free(r->frag[i]);
		r->frag[i] = NULL;
		r->flen[i] = 0;
	}
	r->used = false;
}

static void held_release(struct arq_rx *rx, struct arq_rx_held *h)
{
	rx->bytes -= h->len;
	free(h->data);
	memset(h, 0, sizeof(*h));
	rx->nheld--;
}

/* Every partly reassembled and every held packet, given back to the buffer budget. */
static void release_buffered(struct arq_rx *rx)
{
	uint32_t i;

	if (rx->reasm)
		for (i = 0; i < rx->p.reasm_slots; i++)
			if (rx->reasm[i].used)
				reasm_release(rx, &rx->reasm[i]);
	if (rx->held)
		for (i = 0; i < rx->p.window; i++)
			if (rx->held[i].data)
				held_release(rx, &rx->held[i]);
}

void arq_rx_free(struct arq_rx *rx)
{
	release_buffered(rx);
	free(rx->seen);
	free(rx->held);
	free(rx->reasm);
	free(rx->scratch);
	rx->seen = NULL;
	rx->held = NULL;
	rx->reasm = NULL;
	rx->scratch = NULL;
}

static uint32_t idx(const struct arq_rx *rx, uint32_t seq)
{
	return seq % rx->p.window;
}

static bool seen(const struct arq_rx *rx, uint32_t seq)
{
	uint32_t i = idx(rx, seq);

	return rx->seen[i / 8] & (1u << (i % 8));
}

static void set_seen(struct arq_rx *rx, uint32_t seq, bool on)
{
	uint32_t i = idx(rx, seq);

	if (on)
		rx->seen[i / 8] |= (uint8_t)(1u << (i % 8));
	else
		rx->seen[i / 8] &= (uint8_t)~(1u << (i % 8));
}

static void deliver_packet(struct arq_rx *rx, const uint8_t *pkt, size_t len)
{
	rx->cnt.packets_delivered++;
	rx->deliver(rx->ctx, pkt, len);
}

static struct arq_reasm *reasm_slot(struct arq_rx *rx, uint16_t pkt_id, uint32_t first_seq, uint8_t count,
				    uint64_t now)
{
	struct arq_reasm *free_slot = NULL, *oldest = NULL;
	uint32_t i;

	for (i = 0; i < rx->p.reasm_slots; i++) {
		struct arq_reasm *r = &rx->reasm[i];

		if (!r->used) {
			if (!free_slot)
				free_slot = r;
			continue;
		}
		if (r->pkt_id == pkt_id && r->first_seq == first_seq && r->count == count)
			return r;
		if (!oldest || r->started_ns < oldest->started_ns)
			oldest = r;
	}
	if (!free_slot) {
		rx->cnt.reassembly_dropped++;
		reasm_release(rx, oldest);
		free_slot = oldest;
	}
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->used = true;
	free_slot->pkt_id = pkt_id;
	free_slot->first_seq = first_seq;
	free_slot->count = count;
	free_slot->started_ns = now;
	return free_slot;
}

static void reassemble(struct arq_rx *rx, uint32_t seq, uint16_t pkt_id, uint8_t index, uint8_t count,
		       const uint8_t *payload, uint16_t len, uint64_t now)
{
	struct arq_reasm *r = reasm_slot(rx, pkt_id, seq - index, count, now);
	size_t total = 0;
	uint32_t i;

	if (r->frag[index])
		return;	/* cannot happen: duplicates never get here */
	r->frag[index] = malloc(len);
	if (!r->frag[index]) {
		rx->cnt.reassembly_dropped++;
		reasm_release(rx, r);
		return;
	}
	memcpy(r->frag[index], payload, len);
	r->flen[index] = len;
	rx->bytes += len;
	if (++r->got < r->count)
		return;
	for (i = 0; i < r->count; i++) {
		if (total + r->flen[i] > SCRATCH_SIZE) {
			rx->cnt.reassembly_dropped++;	/* larger than any IP packet: a lie */
			reasm_release(rx, r);
			return;
		}
		memcpy(rx->scratch + total, r->frag[i], r->flen[i]);
		total += r->flen[i];
	}
	reasm_release(rx, r);
	rx->cnt.reassembled++;
	deliver_packet(rx, rx->scratch, total);
}

static void deliver_frame(struct arq_rx *rx, uint32_t seq, uint16_t pkt_id, uint8_t index, uint8_t count,
			  const uint8_t *payload, uint16_t len, uint64_t now)
{
	if (count)
		reassemble(rx, seq, pkt_id, index, count, payload, len, now);
	else
		deliver_packet(rx, payload, len);
}

/* Frame low leaves the window: a held frame goes up, a hole is counted. */
static void pass_low(struct arq_rx *rx, uint64_t now)
{
	struct arq_rx_held *h = rx->held ? &rx->held[idx(rx, rx->low)] : NULL;

	if (seen(rx, rx->low)) {
		set_seen(rx, rx->low, false);
		if (h && h->data) {
			deliver_frame(rx, rx->low, h->pkt_id, h->frag_index, h->frag_count, h->data, h->len, now);
			held_release(rx, h);
		}
	} else {
		rx->cnt.holes_skipped++;
	}
	rx->low++;
}

/* Incomplete packets with every fragment below low can never complete. */
static void reasm_sweep(struct arq_rx *rx, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < rx->p.reasm_slots; i++) {
		struct arq_reasm *r = &rx->reasm[i];

		if (r->used && (arq_before(r->first_seq + r->count - 1, rx->low) ||
				now >= r->started_ns + rx->p.reasm_timeout_ns)) {
			rx->cnt.reassembly_dropped++;
			reasm_release(rx, r);
		}
	}
}

static void advance(struct arq_rx *rx, uint64_t now)
{
	while (rx->low != rx->high && seen(rx, rx->low))
		pass_low(rx, now);
	if (arq_after(rx->low, rx->high))
		rx->high = rx->low;
}

/* Move low to target: frames in between are delivered (resequencing) or were holes. */
static void skip_to(struct arq_rx *rx, uint32_t target, uint64_t now)
{
	uint32_t n = 0;

	while (arq_before(rx->low, target) && n++ < rx->p.window)
		pass_low(rx, now);
	if (arq_before(rx->low, target)) {
		/* beyond the window nothing was received */
		rx->cnt.holes_skipped += target - rx->low;
		rx->low = target;
	}
	advance(rx, now);
	reasm_sweep(rx, now);
}

static void reset(struct arq_rx *rx, uint32_t base)
{
	release_buffered(rx);
	memset(rx->seen, 0, (rx->p.window + 7) / 8);
	rx->low = rx->high = base;
	rx->started = true;
	rx->ack_at = 0;		/* what waited belongs to the old sender */
}

static void send_ack(struct arq_rx *rx, uint32_t seq)
{
	struct arq_frame a = { .type = ARQ_ACK, .seq = seq, .aux = rx->low };

	rx->cnt.acks_sent++;
	rx->ack_at = 0;		/* low covers what waited */
	rx->feedback(rx->ctx, &a);
}

/* Frame seq is new: acknowledge it now, or let it wait when low alone says it arrived. */
static void ack_new(struct arq_rx *rx, uint32_t seq, uint64_t now)
{
	if (!rx->p.ack_delay_ns || rx->low != rx->high) {
		send_ack(rx, seq);
		return;
	}
	rx->cnt.acks_deferred++;
	rx->ack_seq = seq;
	if (!rx->ack_at)
		rx->ack_at = now + rx->p.ack_delay_ns;
}

bool arq_rx_ack_waiting(const struct arq_rx *rx, uint32_t *cum)
{
	*cum = rx->low;
	return rx->ack_at != 0;
}

void arq_rx_ack_carried(struct arq_rx *rx)
{
	rx->ack_at = 0;
	rx->cnt.acks_carried++;
}

static void status_news(struct arq_rx *rx, bool urgent, uint64_t now)
{
	rx->status_news = true;
	if (urgent)
		rx->status_at = now;
	else if (!rx->status_at)
		rx->status_at = now + rx->p.status_interval_ns;
}

/* A base the current sender can carry: acks lost put it at most a window (two, for slack) below low,
 * frames given up at most a window above it. */
static bool in_step(const struct arq_rx *rx, uint32_t base)
{
	uint32_t w = rx->p.window;

	return !arq_before(base, rx->low - 2 * w) && !arq_after(base, rx->low + w);
}

/*
 * A frame out of step: a sender that restarted (or gave up more than a
 * window in an outage), or a stale or forged frame.  Gather it as evidence;
 * true once ARQ_RESYNC_FRAMES frames of distinct sequence numbers and
 * bases within a window of each other agree, and the window has moved to
 * their newest base.
 */
static bool resync_confirmed(struct arq_rx *rx, const struct arq_frame *f, uint64_t now)
{
	uint32_t i, w = rx->p.window, d;
	bool agrees = rx->resync.n > 0;

	if (agrees) {
		d = arq_after(f->aux, rx->resync.base) ? f->aux - rx->resync.base : rx->resync.base - f->aux;
		agrees = d <= w;
		for (i = 0; agrees && i < rx->resync.n; i++)
			agrees = rx->resync.seq[i] != f->seq;
	}
	if (!agrees) {
		rx->resync.n = 0;
		rx->resync.base = f->aux;
	}
	rx->resync.seq[rx->resync.n++] = f->seq;
	if (arq_after(f->aux, rx->resync.base))
		rx->resync.base = f->aux;
	if (rx->resync.n < ARQ_RESYNC_FRAMES)
		return false;
	rx->cnt.resyncs++;
	if (arq_after(rx->resync.base, rx->low))
		skip_to(rx, rx->resync.base, now);	/* an outage: held frames below it go up */
	else
		reset(rx, rx->resync.base);	/* a restart: nothing of the old sender can be completed */
	rx->resync.n = 0;
	return true;
}

/* Whether a fragment may go into reassembly: rx_buffer has room, or it completes its packet. */
static bool reasm_fits(const struct arq_rx *rx, const struct arq_frame *f)
{
	uint32_t i, first = f->seq - f->frag_index;

	if (rx->bytes + f->len <= rx->p.buffer_bytes)
		return true;
	for (i = 0; i < rx->p.reasm_slots; i++) {
		const struct arq_reasm *r = &rx->reasm[i];

		if (r->used && r->pkt_id == f->pkt_id && r->first_seq == first && r->count == f->frag_count)
			return r->got + 1 == r->count && !r->frag[f->frag_index];
	}
	return false;
}

void arq_rx_on_data(struct arq_rx *rx, const struct arq_frame *f, uint64_t now)
{
	uint32_t seq = f->seq, w = rx->p.window;
	bool new_hole = false;

	rx->cnt.frames_received++;
	/* the sender never has a window or more outstanding above its base: a lie */
	if (seq - f->aux >= w) {
		rx->cnt.inconsistent++;
		return;
	}
	if (!rx->started) {
		reset(rx, f->aux);
	} else if (in_step(rx, f->aux)) {
		rx->resync.n = 0;	/* the sender we know is alive */
	} else if (!resync_confirmed(rx, f, now)) {
		rx->cnt.out_of_step++;
		return;
	}
	/* a base above low: the sender gave frames up */
	if (arq_after(f->aux, rx->low))
		skip_to(rx, f->aux, now);
	if (arq_before(seq, rx->low) || (arq_before(seq, rx->high) && seen(rx, seq))) {
		rx->cnt.duplicates++;
		if (rx->p.feedback == ARQ_FEEDBACK_ACK)
			send_ack(rx, seq);	/* its first ack may have been lost */
		else
			status_news(rx, false, now);
		return;
	}
	if (!arq_before(seq, rx->low + w)) {
		rx->cnt.out_of_window++;
		return;
	}
	if (rx->p.resequence && seq != rx->low && rx->bytes + f->len > rx->p.buffer_bytes) {
		rx->cnt.buffer_full_drops++;
		return;
	}
	if (f->frag_count && (!rx->p.resequence || seq == rx->low) && !reasm_fits(rx, f)) {
		rx->cnt.reasm_buffer_full++;
		return;
	}
	rx->cnt.frames_new++;
	set_seen(rx, seq, true);
	if (arq_before(seq, rx->high)) {
		uint64_t depth = rx->high - 1 - seq;

		rx->cnt.frames_out_of_order++;
		rx->cnt.reorder_depth_sum += depth;
		if (depth > rx->cnt.reorder_depth_max)
			rx->cnt.reorder_depth_max = depth;
	} else {
		new_hole = seq != rx->high;
		rx->high = seq + 1;
	}
	if (!rx->p.resequence || seq == rx->low) {
		deliver_frame(rx, seq, f->pkt_id, f->frag_index, f->frag_count, f->payload, f->len, now);
		if (rx->p.resequence) {
			/* seq == low, already up: low moves on, then over what it held */
			set_seen(rx, seq, false);
			rx->low++;
			advance(rx, now);
		}
	} else {
		struct arq_rx_held *h = &rx->held[idx(rx, seq)];

		h->data = malloc(f->len ? f->len : 1);
		if (!h->data) {
			set_seen(rx, seq, false);
			rx->cnt.buffer_full_drops++;
			return;
		}
		memcpy(h->data, f->payload, f->len);
		h->len = f->len;
		h->pkt_id = f->pkt_id;
		h->frag_index = f->frag_index;
		h->frag_count = f->frag_count;
		h->arrived_ns = now;
		rx->bytes += f->len;
		rx->nheld++;
		rx->cnt.resequenced++;
		if (rx->nheld > rx->cnt.reseq_held_max)
			rx->cnt.reseq_held_max = rx->nheld;
	}
	if (!rx->p.resequence)
		advance(rx, now);
	reasm_sweep(rx, now);
	if (rx->p.feedback == ARQ_FEEDBACK_ACK)
		ack_new(rx, seq, now);
	else
		status_news(rx, new_hole, now);
}

static void send_status(struct arq_rx *rx, uint64_t now)
{
	struct arq_frame s = { .type = ARQ_STATUS, .seq = rx->low };
	uint32_t nbits = rx->high - rx->low > 1 ? rx->high - rx->low - 1 : 0, i;
	size_t nbytes;

	if (nbits > rx->p.status_max_bytes * 8)
		nbits = rx->p.status_max_bytes * 8;
	nbytes = (nbits + 7) / 8;
	memset(rx->scratch, 0, nbytes);
	for (i = 0; i < nbits; i++)
		if (seen(rx, rx->low + 1 + i))
			rx->scratch[i / 8] |= (uint8_t)(1u << (i % 8));
	s.payload = rx->scratch;
	s.len = (uint16_t)nbytes;
	rx->cnt.status_sent++;
	rx->feedback(rx->ctx, &s);
	rx->status_news = false;
	/* repeated while a hole is open: a lost status must not stall recovery */
	rx->status_at = rx->high != rx->low ? now + rx->p.status_interval_ns : 0;
}

static uint64_t reseq_deadline(const struct arq_rx *rx)
{
	uint64_t first = 0;
	uint32_t seq;

	if (!rx->nheld)
		return 0;
	for (seq = rx->low; seq != rx->high; seq++) {
		const struct arq_rx_held *h = &rx->held[idx(rx, seq)];

		if (h->data && (!first || h->arrived_ns < first))
			first = h->arrived_ns;
	}
	return first ? first + rx->p.reseq_timeout_ns : 0;
}

uint64_t arq_rx_deadline(const struct arq_rx *rx)
{
	uint64_t first = rx->status_at, t;
	uint32_t i;

	if (rx->ack_at && (!first || rx->ack_at < first))
		first = rx->ack_at;
	t = rx->held ? reseq_deadline(rx) : 0;
	if (t && (!first || t < first))
		first = t;
	for (i = 0; i < rx->p.reasm_slots; i++) {
		t = rx->reasm[i].started_ns + rx->p.reasm_timeout_ns;
		if (rx->reasm[i].used && (!first || t < first))
			first = t;
	}
	return first;
}

void arq_rx_on_timer(struct arq_rx *rx, uint64_t now)
{
	uint64_t t;

	/* resequencing: give up on the hole at low once a frame waited reseq_timeout behind it */
	while (rx->held && (t = reseq_deadline(rx)) && t <= now) {
		uint32_t seq = rx->low;

		while (!rx->held[idx(rx, seq)].data)
			seq++;
		skip_to(rx, seq + 1, now);
	}
	reasm_sweep(rx, now);
	if (rx->ack_at && now >= rx->ack_at)
		send_ack(rx, rx->ack_seq);	/* no data frame went back in time */
	if (rx->status_at && now >= rx->status_at && rx->p.feedback == ARQ_FEEDBACK_STATUS)
		send_status(rx, now);
}
