// SPDX-License-Identifier: GPL-2.0
/*
 * The retry-chain walk (see decide.h).
 */
#include "decide.h"

#include <string.h>

void decide_frame(const struct frame_in *in, uint64_t start_ns, unsigned int max_attempts,
		  struct lm_state *channel, const struct lm_params *model, bool lossy, struct frame_fate *out)
{
	struct mac_timing timing;
	uint64_t now = start_ns;
	unsigned int i, try, limit = max_attempts;
	bool done = false;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < TX_MAX_RATES; i++)
		out->reported[i] = (struct tx_rate_entry){ -1, 0 };
	mac_timing_for(in->freq_mhz, &timing);
	if (in->no_ack)
		limit = 1;	/* nobody acknowledges: the sender cannot know to retry */

	for (i = 0; i < TX_MAX_RATES && !done; i++) {
		const struct tx_rate_entry *e = &in->rates[i];
		struct phy_rate rate;
		bool rts;

		if (e->idx < 0 || !e->count)
			break;
		if (phy_rate_from_hwsim(in->freq_mhz, e->idx, in->rate_flags[i], &rate))
			break;
		rts = in->rate_flags[i] & HWSIM_RC_USE_RTS_CTS;
		for (try = 0; try < e->count; try++) {
			uint64_t airtime;
			bool lost;

			if (limit && out->attempts >= limit) {
				done = true;
				break;
			}
			airtime = attempt_ns(&timing, &rate, in->bytes + FCS_BYTES, out->attempts, in->no_ack, rts);
			/* The channel's state when the attempt starts. */
			lost = !channel || (lossy && lm_attempt_lost(channel, model, now, in->bytes + FCS_BYTES));
			now += airtime;
			out->airtime_ns += airtime;
			out->attempts++;
			out->reported[i].idx = e->idx;
			out->reported[i].count++;
			if (lost) {
				out->attempts_lost++;
				continue;
			}
			out->delivered = true;
			out->rx_rate_idx = phy_rx_rate_index(in->freq_mhz, &rate);
			done = true;
			break;
		}
	}
	if (!out->attempts)
		out->bad_chain = true;
	out->end_ns = now;
}
