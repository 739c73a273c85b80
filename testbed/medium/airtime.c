// SPDX-License-Identifier: GPL-2.0
/*
 * 802.11 airtime (see airtime.h).
 */
#include "airtime.h"

/* mac80211_hwsim.c hwsim_rates[] in 100 kbit/s; the 5 GHz band starts at 6. */
static const uint16_t hwsim_rates[] = { 10, 20, 55, 110, 60, 90, 120, 180, 240, 360, 480, 540 };
#define HWSIM_N_RATES (sizeof(hwsim_rates) / sizeof(hwsim_rates[0]))
#define HWSIM_5GHZ_FIRST 4

/* Data bits per OFDM symbol per spatial stream, MCS 0-7 (802.11-2016 19.5). */
static const uint16_t ht_ndbps_20[8] = { 26, 52, 78, 104, 156, 208, 234, 260 };
static const uint16_t ht_ndbps_40[8] = { 54, 108, 162, 216, 324, 432, 486, 540 };

#define US 1000ULL

static bool band_2ghz(uint32_t freq_mhz)
{
	return freq_mhz < 3000;
}

void mac_timing_for(uint32_t freq_mhz, struct mac_timing *t)
{
	t->slot_ns = 9 * US;	/* ERP short slot: every station here is ERP */
	t->sifs_ns = band_2ghz(freq_mhz) ? 10 * US : 16 * US;
	t->aifsn = 3;		/* best effort */
	t->cw_min = 15;
	t->cw_max = 1023;
	t->signal_ext_ns = band_2ghz(freq_mhz) ? 6 * US : 0;
}

int phy_rate_from_hwsim(uint32_t freq_mhz, int idx, uint32_t flags, struct phy_rate *out)
{
	unsigned int first = band_2ghz(freq_mhz) ? 0 : HWSIM_5GHZ_FIRST;

	*out = (struct phy_rate){ 0 };
	if (idx < 0)
		return -1;
	out->ht40 = flags & HWSIM_RC_40_MHZ_WIDTH;
	out->short_gi = flags & HWSIM_RC_SHORT_GI;
	if (flags & HWSIM_RC_VHT_MCS) {
		/* VHT (5 GHz only): the HT timing of the MCS, streams in the high nibble. */
		if ((idx & 0x0f) > 7 || (idx >> 4) > 3)
			return -1;
		out->kind = PHY_HT;
		out->mcs = (uint8_t)((idx & 0x0f) + 8 * (idx >> 4));
		return 0;
	}
	if (flags & HWSIM_RC_MCS) {
		if (idx > 31)
			return -1;
		out->kind = PHY_HT;
		out->mcs = (uint8_t)idx;
		return 0;
	}
	if ((unsigned int)idx + first >= HWSIM_N_RATES)
		return -1;
	out->kbps = hwsim_rates[idx + first] * 100U;
	out->kind = out->kbps == 1000 || out->kbps == 2000 || out->kbps == 5500 || out->kbps == 11000 ? PHY_DSSS
												      : PHY_OFDM;
	out->short_preamble = flags & HWSIM_RC_SHORT_PREAMBLE;
	return 0;
}

static uint32_t ht_ndbps(const struct phy_rate *r)
{
	unsigned int streams = r->mcs / 8 + 1;

	return (r->ht40 ? ht_ndbps_40 : ht_ndbps_20)[r->mcs % 8] * streams;
}

uint32_t phy_rate_kbps(const struct phy_rate *r)
{
	if (r->kind != PHY_HT)
		return r->kbps;
	/* bits per symbol over 4 us (3.6 us with the short guard interval) */
	return r->short_gi ? ht_ndbps(r) * 10000U / 36U : ht_ndbps(r) * 1000U / 4U;
}

int phy_rx_rate_index(uint32_t freq_mhz, const struct phy_rate *r)
{
	static const uint16_t ht_legacy[8] = { 60, 120, 180, 240, 360, 480, 540, 540 };
	unsigned int first = band_2ghz(freq_mhz) ? 0 : HWSIM_5GHZ_FIRST;
	uint32_t want = r->kind == PHY_HT ? ht_legacy[r->mcs % 8] : r->kbps / 100;
	unsigned int i;

	for (i = first; i < HWSIM_N_RATES; i++)
		if (hwsim_rates[i] == want)
			return (int)(i - first);
	return 0;
}

struct phy_rate phy_control_rate(const struct phy_rate *r)
{
	struct phy_rate ctl = { .kind = PHY_OFDM };
	uint32_t kbps;

	if (r->kind == PHY_DSSS) {
		/* hostapd's 802.11g basic rates: 1, 2, 5.5 and 11 Mbit/s */
		ctl.kind = PHY_DSSS;
		ctl.kbps = r->kbps;
		ctl.short_preamble = r->short_preamble;
		return ctl;
	}
	/* The mandatory OFDM rate of the same modulation or below. */
	if (r->kind == PHY_HT) {
		static const uint16_t by_mcs[8] = { 6000, 12000, 12000, 24000, 24000, 24000, 24000, 24000 };

		ctl.kbps = by_mcs[r->mcs % 8];
		return ctl;
	}
	kbps = r->kbps;
	ctl.kbps = kbps >= 24000 ? 24000 : kbps >= 12000 ? 12000 : 6000;
	return ctl;
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

uint64_t ppdu_ns(const struct mac_timing *t, const struct phy_rate *r, uint32_t bytes)
{
	uint64_t bits = 16 + 8ULL * bytes + 6;	/* SERVICE + PSDU + tail */
	uint64_t symbols, preamble, body;
	unsigned int streams, ltfs;

	switch (r->kind) {
	case PHY_DSSS:
		preamble = r->kbps == 1000 || !r->short_preamble ? 192 * US : 96 * US;
		/* whole microseconds, as the PLCP LENGTH field counts them */
		return preamble + div_up(8ULL * bytes * 1000ULL, r->kbps) * US;
	case PHY_OFDM:
		symbols = div_up(bits, r->kbps * 4 / 1000);
		return 20 * US + symbols * 4 * US + t->signal_ext_ns;
	case PHY_HT:
	default:
		streams = r->mcs / 8 + 1;
		ltfs = streams == 3 ? 4 : streams;
		preamble = (20 + 8 + 4 + 4ULL * ltfs) * US;	/* L-STF/LTF/SIG, HT-SIG, HT-STF, HT-LTFs */
		symbols = div_up(bits, ht_ndbps(r));
		/* short GI: 3.6 us symbols, the PPDU rounded up to 4 us */
		body = r->short_gi ? div_up(symbols * 36, 40) * 4 * US : symbols * 4 * US;
		return preamble + body + t->signal_ext_ns;
	}
}

uint64_t backoff_ns(const struct mac_timing *t, unsigned int retry)
{
	uint64_t cw = t->cw_max;

	if (retry < 16) {
		cw = ((uint64_t)t->cw_min + 1) << retry;
		if (cw > (uint64_t)t->cw_max + 1)
			cw = (uint64_t)t->cw_max + 1;
		cw -= 1;
	}
	return cw * t->slot_ns / 2;
}

uint64_t attempt_ns(const struct mac_timing *t, const struct phy_rate *r, uint32_t bytes, unsigned int retry,
		    bool no_ack, bool rts)
{
	struct phy_rate ctl = phy_control_rate(r);
	uint64_t ns = (uint64_t)t->sifs_ns + (uint64_t)t->aifsn * t->slot_ns + backoff_ns(t, retry);

	if (rts)
		ns += ppdu_ns(t, &ctl, RTS_BYTES) + t->sifs_ns + ppdu_ns(t, &ctl, ACK_BYTES) + t->sifs_ns;
	ns += ppdu_ns(t, r, bytes);
	if (!no_ack)
		ns += t->sifs_ns + ppdu_ns(t, &ctl, ACK_BYTES);
	return ns;
}
