// SPDX-License-Identifier: GPL-2.0-only
/*
 * SACK towards the sender: while every hole below the highest SACK block is
 * cached here (so this box will repair it), the SACK option of forwarded
 * ACKs is blanked (hide_sack): a RACK/SACK sender would otherwise mark the
 * holes lost about min_rtt/4 later and retransmit them itself, halving its
 * window for a loss the base station repairs anyway.  When a hole is not
 * cached (lost before this box, or the cache was full), ACKs pass untouched:
 * that loss is the sender's to recover, and its SACK information is true.
 */
#include <string.h>

#include "filter_snoop.h"
#include "flow.h"
#include "seq.h"

/* RFC 2883: the first block reports a duplicate if it lies below the ACK or inside the second block. */
bool snoop_first_block_is_dsack(const struct pkt *p)
{
	if (p->nsack == 0)
		return false;
	if (seq_before(p->sack[0].start, p->ack))
		return true;
	return p->nsack > 1 && seq_geq(p->sack[0].start, p->sack[1].start) && seq_leq(p->sack[0].end, p->sack[1].end);
}

/* Is a SACK block plausible: non-empty, above the ACK, not beyond what was sent? */
static bool block_valid(const struct snoop_state *s, const struct sack_block *b, uint32_t ack)
{
	return seq_before(b->start, b->end) && seq_geq(b->start, ack) && seq_leq(b->end, s->snd_max);
}

/* Mark cached segments the SACK blocks cover; they are evidence of arrival. */
void snoop_sack_mark(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx)
{
	struct snoop_state *s = &f->st.snoop;
	int b = snoop_first_block_is_dsack(p) ? 1 : 0;
	uint32_t i;

	for (; b < p->nsack; b++) {
		const struct sack_block *blk = &p->sack[b];

		if (!block_valid(s, blk, p->ack))
			continue;
		for (i = 0; i < f->cache.count; i++) {
			struct seg *g = segq_at(&f->cache, i);

			if (seq_geq(g->seq, blk->end))
				break;
			if (seq_geq(g->seq, blk->start) && seq_leq(g->end, blk->end) && !(g->flags & SEG_SACKED)) {
				g->flags |= SEG_SACKED;
				snoop_arrived(f, g, ctx);
				if (!(g->flags & SEG_RATE_COUNTED)) {
					g->flags |= SEG_RATE_COUNTED;
					s->delivered_bytes += g->end - g->seq;
				}
			}
		}
	}
	snoop_rate_update(s, ctx->now);
}

/*
 * Will this box repair every hole below the highest SACK block?  Then the
 * sender need not see the blocks (nor the dupack that carries them).
 */
bool snoop_holes_cached(const struct flow *f, const struct pkt *p, uint32_t *exposed)
{
	const struct snoop_state *s = &f->st.snoop;
	uint32_t pos = p->ack, top = p->ack, guard;
	int b, first = snoop_first_block_is_dsack(p) ? 1 : 0;

	for (b = first; b < p->nsack; b++)
		if (block_valid(s, &p->sack[b], p->ack) && seq_after(p->sack[b].end, top))
			top = p->sack[b].end;
	for (guard = f->cache.count + PKT_MAX_SACK + 2; seq_before(pos, top) && guard; guard--) {
		bool moved = false;
		long i;

		for (b = first; b < p->nsack; b++) {
			const struct sack_block *blk = &p->sack[b];

			if (block_valid(s, blk, p->ack) && seq_leq(blk->start, pos) && seq_after(blk->end, pos)) {
				pos = blk->end;
				moved = true;
				break;
			}
		}
		if (moved)
			continue;
		*exposed = pos;
		i = segq_find(&f->cache, pos);
		if (i < 0)
			return false;	/* a hole this box has no copy of */
		const struct seg *g = segq_at(&f->cache, (uint32_t)i);

		if (g->flags & (SEG_NOT_OURS | SEG_SENDER_RTX))
			return false;	/* the sender is (or must be) recovering it */
		pos = g->end;
	}
	*exposed = pos;
	return !seq_before(pos, top);
}

/* Is pos inside a valid, non-DSACK block of p?  Then where does that block end? */
static bool in_block(const struct flow *f, const struct pkt *p, uint32_t pos, uint32_t *end)
{
	int b;

	for (b = snoop_first_block_is_dsack(p) ? 1 : 0; b < p->nsack; b++) {
		const struct sack_block *blk = &p->sack[b];

		if (block_valid(&f->st.snoop, blk, p->ack) && seq_leq(blk->start, pos) && seq_after(blk->end, pos)) {
			*end = blk->end;
			return true;
		}
	}
	return false;
}

/*
 * The one SACK block to show the sender for the hole at `exposed` that is
 * its to recover: from the hole's end, everything that is either received
 * (SACKed) or held here for local repair, up to the next hole that is not
 * ours.  Data held here is reported as received: a promise pepd keeps by
 * repairing it (and if it gives up, the sender's SACK-reneging timer
 * retransmits it).  Without that, a SACK sender would retransmit every hole
 * above the exposed one too, all of them already being repaired here.
 */
static bool exposed_block(const struct flow *f, const struct pkt *p, uint32_t exposed, struct sack_block *blk)
{
	const struct snoop_state *s = &f->st.snoop;
	uint32_t pos, top = p->ack, guard, end;
	long i = segq_find(&f->cache, exposed);
	int b;

	for (b = snoop_first_block_is_dsack(p) ? 1 : 0; b < p->nsack; b++)
		if (block_valid(s, &p->sack[b], p->ack) && seq_after(p->sack[b].end, top))
			top = p->sack[b].end;
	if (i >= 0) {
		pos = segq_at(&f->cache, (uint32_t)i)->end;	/* the hole is one cached segment */
	} else {
		/* not cached here: it reaches up to the next block */
		pos = top;
		for (b = snoop_first_block_is_dsack(p) ? 1 : 0; b < p->nsack; b++)
			if (block_valid(s, &p->sack[b], p->ack) && seq_after(p->sack[b].start, exposed) &&
			    seq_before(p->sack[b].start, pos))
				pos = p->sack[b].start;
	}
	blk->start = pos;
	for (guard = f->cache.count + PKT_MAX_SACK + 2; seq_before(pos, top) && guard; guard--) {
		if (in_block(f, p, pos, &end)) {
			pos = end;
			continue;
		}
		i = segq_find(&f->cache, pos);
		if (i < 0 || segq_at(&f->cache, (uint32_t)i)->flags & (SEG_NOT_OURS | SEG_SENDER_RTX))
			break;
		pos = segq_at(&f->cache, (uint32_t)i)->end;
	}
	blk->end = pos;
	return seq_after(blk->end, blk->start);
}

/*
 * Below an exposed hole that is not the cumulative ACK's: everything from
 * the end of the segment at the ACK (a hole this box repairs) up to it is
 * received or held here, so one block says so.  Without it a RACK sender
 * would take the received data there for lost as well and send it again.
 */
static bool block_below(const struct flow *f, const struct pkt *p, uint32_t exposed, struct sack_block *blk)
{
	long i = segq_find(&f->cache, p->ack);

	if (exposed == p->ack || i < 0)
		return false;
	blk->start = segq_at(&f->cache, (uint32_t)i)->end;
	blk->end = exposed;
	return seq_before(blk->start, blk->end);
}

static bool same_blocks(const struct pkt *p, const struct sack_block *blocks, uint8_t n)
{
	uint8_t i;

	if (p->nsack != n)
		return false;
	for (i = 0; i < n; i++)
		if (p->sack[i].start != blocks[i].start || p->sack[i].end != blocks[i].end)
			return false;
	return true;
}

void snoop_present_sack(struct flow *f, const struct pkt *p, const struct pep_ctx *ctx, struct pep_out *out,
			    bool sackm)
{
	uint32_t exposed = p->ack;
	struct sack_block blocks[2];
	uint8_t n = 0;

	if (!sackm || !p->nsack || !ctx->cfg->hide_sack || out->verdict != VERDICT_ACCEPT)
		return;
	if (snoop_holes_cached(f, p, &exposed)) {
		out->hide_sack = true;
		COUNT(ctx, f, sack_hidden, 1);
		return;
	}
	/* the sender's hole first: its block carries the newest arrivals */
	if (exposed_block(f, p, exposed, &blocks[n]))
		n++;
	if (block_below(f, p, exposed, &blocks[n]))
		n++;
	if (n && !same_blocks(p, blocks, n)) {
		out->sack_n = n;
		memcpy(out->sack_blocks, blocks, n * sizeof(blocks[0]));
		COUNT(ctx, f, sack_trimmed, 1);
	}
}
