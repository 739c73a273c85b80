/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How long an 802.11 transmission attempt holds the medium: the PPDU at
 * the attempt's rate (IEEE 802.11-2016 clauses 16-19 TXTIME) plus the
 * MAC's per-attempt overhead: AIFS (best effort: SIFS + 3 slots), the
 * mean backoff of the attempt's contention window, SIFS and the ACK at
 * the control response rate (RTS/CTS when the rate asks for it).  Pure.
 *
 * The backoff is its mean, CW/2 slots with CW = min(2^k (CWmin + 1),
 * CWmax + 1) - 1 on retry k: the airtime is then a function of the retry
 * chain only, which the unit tests pin down.
 */
#ifndef AIRTCP_AIRTIME_H
#define AIRTCP_AIRTIME_H

#include <stdbool.h>
#include <stdint.h>

enum phy_kind {
	PHY_DSSS,	/* 802.11b: 1, 2, 5.5, 11 Mbit/s */
	PHY_OFDM,	/* 802.11a/g: 6 ... 54 Mbit/s */
	PHY_HT,		/* 802.11n mixed format */
};

struct phy_rate {
	enum phy_kind kind;
	uint32_t kbps;		/* DSSS/OFDM */
	uint8_t mcs;		/* HT: 0-31 */
	bool ht40;
	bool short_gi;
	bool short_preamble;	/* DSSS above 1 Mbit/s */
};

struct mac_timing {
	uint32_t slot_ns;
	uint32_t sifs_ns;
	uint32_t aifsn;
	uint32_t cw_min;
	uint32_t cw_max;
	uint32_t signal_ext_ns;	/* OFDM/HT on 2.4 GHz */
};

/* hwsim's rate flags (drivers/net/wireless/mac80211_hwsim.h) */
#define HWSIM_RC_USE_RTS_CTS		(1U << 0)
#define HWSIM_RC_USE_CTS_PROTECT	(1U << 1)
#define HWSIM_RC_SHORT_PREAMBLE		(1U << 2)
#define HWSIM_RC_MCS			(1U << 3)
#define HWSIM_RC_40_MHZ_WIDTH		(1U << 5)
#define HWSIM_RC_SHORT_GI		(1U << 7)
#define HWSIM_RC_VHT_MCS		(1U << 8)

#define FCS_BYTES 4
#define ACK_BYTES 14
#define RTS_BYTES 20

/* 2.4 GHz (ERP, short slot) or 5 GHz timing by centre frequency. */
void mac_timing_for(uint32_t freq_mhz, struct mac_timing *t);

/* The rate of a hwsim retry-chain entry (index into the band's legacy
 * rates, or an MCS with HWSIM_RC_MCS); -1 if hwsim has no such rate.
 */
int phy_rate_from_hwsim(uint32_t freq_mhz, int idx, uint32_t flags, struct phy_rate *out);

/* Data rate in kbit/s (HT: from the MCS, width and guard interval). */
uint32_t phy_rate_kbps(const struct phy_rate *r);

/* The legacy index hwsim's receiver takes for the rate (HT: the OFDM
 * rate of the same modulation), or 0.
 */
int phy_rx_rate_index(uint32_t freq_mhz, const struct phy_rate *r);

/* The rate of the ACK (or CTS) that answers a frame sent at r. */
struct phy_rate phy_control_rate(const struct phy_rate *r);

/* PPDU duration of `bytes` bytes (MPDU with FCS) at r. */
uint64_t ppdu_ns(const struct mac_timing *t, const struct phy_rate *r, uint32_t bytes);

/* Mean backoff before retry `retry` (0 = first attempt). */
uint64_t backoff_ns(const struct mac_timing *t, unsigned int retry);

/* The whole attempt: AIFS + backoff + [RTS + SIFS + CTS + SIFS] + PPDU
 * [+ SIFS + ACK].  A failed attempt waits the ACK timeout, about as long.
 */
uint64_t attempt_ns(const struct mac_timing *t, const struct phy_rate *r, uint32_t bytes, unsigned int retry,
		    bool no_ack, bool rts);

#endif /* AIRTCP_AIRTIME_H */
