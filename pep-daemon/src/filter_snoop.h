/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Snoop's state machine, shared by the snoop and snoop+ filters: they
 * differ only in how many extra copies each local retransmission carries,
 * which a policy decides.
 */
#ifndef PEPD_FILTER_SNOOP_H
#define PEPD_FILTER_SNOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "filter.h"
#include "filter_state.h"

struct snoop_policy {
	/* extra copies (0..3) for the next local retransmission of f */
	uint8_t (*extra_copies)(struct flow *f, const struct pep_ctx *ctx);
	/* a first transmission left the cache: lost (needed a local retransmission) or not */
	void (*first_tx_outcome)(struct flow *f, const struct pep_ctx *ctx, bool lost);
};

void snoop_init(struct flow *f, const struct pep_ctx *ctx);
void snoop_packet(const struct snoop_policy *pol, struct flow *f, const struct pkt *p, enum pep_dir dir,
		  const struct pep_ctx *ctx, struct pep_out *out);
void snoop_timer(const struct snoop_policy *pol, struct flow *f, const struct pep_ctx *ctx, struct pep_out *out);
void snoop_sent(struct flow *f, uint32_t seq, bool queued, const struct pep_ctx *ctx);
void snoop_report(const struct flow *f, const struct pep_ctx *ctx, struct json_out *j);

/* The wireless host's segment size (1448 until its SYN is seen). */
uint64_t snoop_mss(const struct flow *f);

/* The local retransmission timeout for the next expiry, backoff included. */
uint64_t snoop_rto(const struct snoop_state *s, const struct pep_config *cfg);

/*
 * Would `copies` extra copies go out on an idle link?  True while the hop's
 * latest RTT stands less than the time to send them (at the measured
 * delivery rate) above its minimum; false while a queue stands, where each
 * copy takes the place of new data, or while the hop is not measured yet.
 */
bool snoop_copies_are_free(const struct snoop_state *s, uint64_t mss, uint8_t copies);

/* Adaptive Snoop+: feed one first-transmission outcome into the estimator (and re-choose c). */
void loss_estimator_update(struct loss_estimator *e, bool lost, uint32_t window, double target);

#define SNOOP_MAX_EXTRA_COPIES 3
#define SNOOP_MAX_BACKOFF 6

#endif
