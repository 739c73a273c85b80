// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>
#include <string.h>

#include "arq_tx.h"

#define MAX_FRAGMENTS 255
#define MAX_BACKOFF_SHIFT 6

int arq_tx_init(struct arq_tx *tx, const struct arq_tx_params *p)
{
	uint32_t cap = 1;

	memset(tx, 0, sizeof(*tx));
	tx->p = *p;
	if (!p->window || p->window > (1u << 20))
		return -1;
	while (cap < p->window)
		cap <<= 1;
	tx->ring = calloc(cap, sizeof(*tx->ring));
	tx->rtxq = calloc(cap, sizeof(*tx->rtxq));
	if (!tx->ring || !tx->rtxq) {
		arq_tx_free(tx);
		return -1;
	}
	tx->mask = cap - 1;
	tx->rto_ns = p->rto_initial_ns;
	tx->base = tx->next_seq = tx->next_new = p->isn;
	return 0;
}

void arq_tx_free(struct arq_tx *tx)
{
	uint32_t i;

	if (tx->ring)
		for (i = 0; i <= tx->mask; i++)
			free(tx->ring[i].data);
	free(tx->ring);
	free(tx->rtxq);
	tx->ring = NULL;
	tx->rtxq = NULL;
}

static struct arq_tx_frame *slot(const struct arq_tx *tx, uint32_t seq)
{
	return &tx->ring[seq & tx->mask];
}

uint32_t arq_tx_room(const struct arq_tx *tx)
{
	if (tx->bytes >= tx->p.buffer_bytes)
		return 0;
	return tx->p.window - arq_tx_outstanding(tx);
}

uint32_t arq_tx_frames_for(const struct arq_tx *tx, size_t len)
{
	if (!tx->p.frag_payload || len <= tx->p.frag_payload)
		return 1;
	return (uint32_t)((len + tx->p.frag_payload - 1) / tx->p.frag_payload);
}

int arq_tx_submit(struct arq_tx *tx, const uint8_t *pkt, size_t len)
{
	uint32_t n = arq_tx_frames_for(tx, len), i;
	size_t chunk = n > 1 ? tx->p.frag_payload : len, off = 0;

	tx->cnt.packets_in++;
	if (!len || n > MAX_FRAGMENTS || (n == 1 && len > tx->p.max_payload)) {
		tx->cnt.too_big_drops++;
		return -1;
	}
	if (n > tx->p.window - arq_tx_outstanding(tx) || tx->bytes + len > tx->p.buffer_bytes) {
		tx->cnt.buffer_full_drops++;
		return -1;
	}
	if (n > 1) {
		tx->cnt.fragmented_packets++;
		tx->next_pkt_id++;
	}
	for (i = 0; i < n; i++) {
		struct arq_tx_frame *fr = slot(tx, tx->next_seq);
		size_t len_i = len - off < chunk ? len - off : chunk;

		fr->data = malloc(len_i);
		if (!fr->data) {
			/* the fragments already queued go out; the receiver drops the incomplete packet */
			tx->cnt.buffer_full_drops++;
			return -1;
		}
		memcpy(fr->data, pkt + off, len_i);
		fr->len = (uint16_t)len_i;
		fr->state = TX_NEW;
		fr->ntx = 0;
		fr->pkt_id = n > 1 ? tx->next_pkt_id : 0;
		fr->frag_index = n > 1 ? (uint8_t)i : 0;
		fr->frag_count = n > 1 ? (uint8_t)n : 0;
		off += len_i;
		tx->bytes += len_i;
		tx->next_seq++;
		tx->cnt.frames_queued++;
	}
	return 0;
}

/* A sequence number in the retransmission queue that still needs sending? */
static bool rtx_live(const struct arq_tx *tx, uint32_t seq)
{
	return !arq_before(seq, tx->base) && arq_before(seq, tx->next_new) && slot(tx, seq)->state == TX_LOST;
}

bool arq_tx_peek(struct arq_tx *tx, struct arq_frame *f)
{
	const struct arq_tx_frame *fr;
	uint32_t seq;

	while (tx->rtx_count && !rtx_live(tx, tx->rtxq[tx->rtx_head])) {
		tx->rtx_head = (tx->rtx_head + 1) & tx->mask;	/* acknowledged late, or given up */
		tx->rtx_count--;
	}
	if (tx->rtx_count) {
		seq = tx->rtxq[tx->rtx_head];
		tx->peek_rtx = true;
	} else if (tx->next_new != tx->next_seq) {
		seq = tx->next_new;
		tx->peek_rtx = false;
	} else {
		tx->peek_valid = false;
		return false;
	}
	fr = slot(tx, seq);
	memset(f, 0, sizeof(*f));
	f->type = ARQ_DATA;
	f->flags = fr->frag_count ? ARQ_F_FRAG : 0;
	f->seq = seq;
	f->aux = tx->base;
	f->pkt_id = fr->pkt_id;
	f->frag_index = fr->frag_index;
	f->frag_count = fr->frag_count;
	f->payload = fr->data;
	f->len = fr->len;
	tx->peek_seq = seq;
	tx->peek_valid = true;
	return true;
}

void arq_tx_sent(struct arq_tx *tx, uint64_t now)
{
	struct arq_tx_frame *fr;

	if (!tx->peek_valid)
		return;
	tx->peek_valid = false;
	fr = slot(tx, tx->peek_seq);
	if (tx->peek_rtx) {
		tx->rtx_head = (tx->rtx_head + 1) & tx->mask;
		tx->rtx_count--;
		tx->cnt.retransmitted++;
	} else {
		tx->next_new++;
		tx->cnt.frames_new++;
	}
	fr->ntx++;
	fr->order = ++tx->order;
	if (fr->ntx == 1)
		fr->first_order = fr->order;
	fr->sent_ns = now;
	fr->state = TX_INFLIGHT;
	tx->cnt.frames_sent++;
	tx->cnt.payload_bytes_sent += fr->len;
}

static void release(struct arq_tx *tx, struct arq_tx_frame *fr)
{
	free(fr->data);
	fr->data = NULL;
	tx->bytes -= fr->len;
	fr->len = 0;
	fr->state = TX_FREE;
}

static void rtt_sample(struct arq_tx *tx, uint64_t rtt)
{
	uint64_t dev;

	if (!tx->have_rtt) {
		tx->srtt_ns = rtt;
		tx->rttvar_ns = rtt / 2;
		tx->have_rtt = true;
	} else {
		dev = rtt > tx->srtt_ns ? rtt - tx->srtt_ns : tx->srtt_ns - rtt;
		tx->rttvar_ns = (3 * tx->rttvar_ns + dev) / 4;
		tx->srtt_ns = (7 * tx->srtt_ns + rtt) / 8;
	}
	tx->rto_ns = tx->srtt_ns + 4 * tx->rttvar_ns;
	if (tx->rto_ns < tx->p.rto_min_ns)
		tx->rto_ns = tx->p.rto_min_ns;
	if (tx->rto_ns > tx->p.rto_max_ns)
		tx->rto_ns = tx->p.rto_max_ns;
	tx->backoff = 0;
}

/* Frame seq reached the receiver: true if that is news. */
static bool ack_one(struct arq_tx *tx, uint32_t seq, uint64_t now)
{
	struct arq_tx_frame *fr = slot(tx, seq);

	if (arq_before(seq, tx->base) || !arq_before(seq, tx->next_new) || fr->state == TX_FREE)
		return false;
	/* Karn: only a frame sent once gives an unambiguous sample */
	if (fr->ntx == 1 && fr->state == TX_INFLIGHT && now >= fr->sent_ns)
		rtt_sample(tx, now - fr->sent_ns);
	if (fr->ntx > 1)
		tx->cnt.acked_after_rtx++;
	tx->progress_ns = now;
	/* which transmission arrived is unknown after a retransmission: the first is the safe guess */
	if (fr->first_order > tx->acked_order)
		tx->acked_order = fr->first_order;
	tx->cnt.acked++;
	release(tx, fr);
	return true;
}

static void advance_base(struct arq_tx *tx)
{
	while (tx->base != tx->next_new && slot(tx, tx->base)->state == TX_FREE)
		tx->base++;
}

static void declare_lost(struct arq_tx *tx, uint32_t seq)
{
	struct arq_tx_frame *fr = slot(tx, seq);

	if ((uint32_t)(fr->ntx - 1) >= tx->p.max_rtx) {
		tx->cnt.given_up++;	/* best effort: TCP recovers it, the link goes on */
		release(tx, fr);
		return;
	}
	fr->state = TX_LOST;
	tx->rtxq[(tx->rtx_head + tx->rtx_count) & tx->mask] = seq;
	tx->rtx_count++;
}

/* Every frame in flight that was sent before an acknowledged one is lost. */
static void detect_losses(struct arq_tx *tx)
{
	uint32_t seq;

	for (seq = tx->base; seq != tx->next_new; seq++) {
		struct arq_tx_frame *fr = slot(tx, seq);

		if (fr->state == TX_INFLIGHT && fr->order < tx->acked_order) {
			tx->cnt.lost_by_ack++;
			declare_lost(tx, seq);
		}
	}
	advance_base(tx);
}

static bool ack_below(struct arq_tx *tx, uint32_t cum, uint64_t now)
{
	bool news = false;
	uint32_t seq;

	if (arq_after(cum, tx->next_new))
		return false;	/* claims frames never sent: ignore the cumulative part */
	for (seq = tx->base; arq_before(seq, cum); seq++)
		news |= ack_one(tx, seq, now);
	return news;
}

void arq_tx_heard(struct arq_tx *tx, uint64_t now)
{
	if (now > tx->heard_ns)
		tx->heard_ns = now;
}

void arq_tx_on_ack(struct arq_tx *tx, uint32_t seq, uint32_t cum, uint64_t now)
{
	bool news = ack_below(tx, cum, now);

	arq_tx_heard(tx, now);

	news |= ack_one(tx, seq, now);
	if (!news)
		tx->cnt.stale_feedback++;
	advance_base(tx);
	detect_losses(tx);
}

void arq_tx_on_carried_ack(struct arq_tx *tx, uint32_t cum, uint64_t now)
{
	/* most data frames carry a cum already known: not stale feedback, just nothing new */
	ack_below(tx, cum, now);
	advance_base(tx);
	detect_losses(tx);
}

void arq_tx_on_status(struct arq_tx *tx, uint32_t cum, const uint8_t *bitmap, size_t bitmap_len, uint64_t now)
{
	bool news = ack_below(tx, cum, now);
	size_t i, nbits = bitmap_len * 8;

	arq_tx_heard(tx, now);

	/* bits past the last frame sent say nothing: a long bitmap costs no more than the window */
	if (!arq_before(cum, tx->next_new))
		nbits = 0;
	else if (nbits > (size_t)(tx->next_new - cum - 1))
		nbits = tx->next_new - cum - 1;
	for (i = 0; i < nbits; i++)
		if (bitmap[i / 8] & (1u << (i % 8)))
			news |= ack_one(tx, cum + 1 + (uint32_t)i, now);
	if (!news)
		tx->cnt.stale_feedback++;
	advance_base(tx);
	detect_losses(tx);
}

static uint64_t current_rto(const struct arq_tx *tx)
{
	uint32_t shift = tx->backoff < MAX_BACKOFF_SHIFT ? tx->backoff : MAX_BACKOFF_SHIFT;
	uint64_t rto = tx->rto_ns << shift;

	return rto > tx->p.rto_max_ns ? tx->p.rto_max_ns : rto;
}

/* Nothing new and no retransmission waits: the link would stay idle. */
static bool idle(const struct arq_tx *tx)
{
	uint32_t i;

	if (tx->next_new != tx->next_seq)
		return false;
	for (i = 0; i < tx->rtx_count; i++)
		if (rtx_live(tx, tx->rtxq[(tx->rtx_head + i) & tx->mask]))
			return false;
	return true;
}

/* The peer has been heard since fr went out: a silent timer is a loss, not an outage. */
static bool heard_since(const struct arq_tx *tx, const struct arq_tx_frame *fr)
{
	return tx->p.idle_repair && tx->heard_ns > fr->sent_ns;
}

/*
 * When fr's timer expires; *short_timer set if that is idle_repair's timer.
 * With timer_restart the full timeout runs from the later of fr's
 * transmission and the last ack of a new frame (RFC 6298 5.3): while acks
 * keep coming the link is alive and a frame lost among them is revealed by
 * a later frame's ack, so a delay spike shorter than the timeout (a busy
 * CPU, a burst in the queue below) fires nothing.  idle_repair's short
 * timer always runs from the transmission: it is for the tail of a burst.
 */
static uint64_t frame_deadline(const struct arq_tx *tx, const struct arq_tx_frame *fr, bool link_idle,
			       bool *short_timer)
{
	uint64_t rto = current_rto(tx), t;
	uint64_t start = fr->sent_ns;
	uint32_t shift = tx->backoff < MAX_BACKOFF_SHIFT ? tx->backoff : MAX_BACKOFF_SHIFT;

	if (tx->p.timer_restart && tx->progress_ns > start)
		start = tx->progress_ns;
	*short_timer = false;
	if (!tx->p.idle_repair || !link_idle || !tx->have_rtt)
		return start + rto;
	t = tx->srtt_ns + tx->rttvar_ns;
	if (!heard_since(tx, fr))
		t <<= shift;
	if (fr->sent_ns + t >= start + rto)
		return start + rto;
	*short_timer = true;
	return fr->sent_ns + t;
}

uint64_t arq_tx_deadline(const struct arq_tx *tx)
{
	bool link_idle = tx->p.idle_repair && idle(tx), short_timer;
	uint64_t first = 0, t;
	uint32_t seq;

	for (seq = tx->base; seq != tx->next_new; seq++) {
		const struct arq_tx_frame *fr = slot(tx, seq);

		if (fr->state != TX_INFLIGHT)
			continue;
		t = frame_deadline(tx, fr, link_idle, &short_timer);
		if (!first || t < first)
			first = t;
	}
	return first;
}

void arq_tx_on_timer(struct arq_tx *tx, uint64_t now)
{
	bool link_idle = tx->p.idle_repair && idle(tx), short_timer, backoff = false;
	uint32_t seq;

	for (seq = tx->base; seq != tx->next_new; seq++) {
		struct arq_tx_frame *fr = slot(tx, seq);

		if (fr->state != TX_INFLIGHT || frame_deadline(tx, fr, link_idle, &short_timer) > now)
			continue;
		tx->cnt.lost_by_timer++;
		if (short_timer)
			tx->cnt.lost_by_idle_timer++;
		/* back off only when the peer may be gone: never heard since the frame went out */
		if (!heard_since(tx, fr))
			backoff = true;
		declare_lost(tx, seq);
	}
	if (backoff && tx->backoff < MAX_BACKOFF_SHIFT)
		tx->backoff++;
	advance_base(tx);
}
