/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One frame's fate on the medium: walk the retry chain mac80211 handed
 * over (up to four rates, each with an attempt count), charge every
 * attempt its airtime from the instant the medium is free, decide every
 * attempt from the link's loss model at that instant, stop at the first
 * success or after the last allowed attempt, and say what to report
 * back: the attempts used per rate, as a real card reports them.  Pure.
 */
#ifndef AIRTCP_DECIDE_H
#define AIRTCP_DECIDE_H

#include <stdbool.h>
#include <stdint.h>

#include "airtime.h"
#include "lossmodel.h"

#define TX_MAX_RATES 4	/* IEEE80211_TX_MAX_RATES */

struct tx_rate_entry {
	int8_t idx;	/* -1: end of the chain */
	uint8_t count;
};

struct frame_in {
	uint32_t freq_mhz;
	uint32_t bytes;			/* MPDU as hwsim hands it, without FCS */
	bool no_ack;			/* group-addressed or NO_ACK: one attempt, no ACK */
	struct tx_rate_entry rates[TX_MAX_RATES];
	uint16_t rate_flags[TX_MAX_RATES];
};

struct frame_fate {
	struct tx_rate_entry reported[TX_MAX_RATES];
	bool delivered;			/* some attempt got through */
	bool bad_chain;			/* no usable rate at all */
	unsigned int attempts;
	unsigned int attempts_lost;
	int rx_rate_idx;		/* of the attempt that got through */
	uint64_t end_ns;		/* the medium is free again */
	uint64_t airtime_ns;
};

/*
 * max_attempts caps the whole chain (the retry limit + 1, 0 = the
 * chain's own counts); channel is the transmitter -> receiver link's loss
 * state (NULL: nobody listens, every attempt fails); lossy false: the
 * channel is not running yet and every attempt gets through.
 */
void decide_frame(const struct frame_in *in, uint64_t start_ns, unsigned int max_attempts,
		  struct lm_state *channel, const struct lm_params *model, bool lossy, struct frame_fate *out);

#endif /* AIRTCP_DECIDE_H */
