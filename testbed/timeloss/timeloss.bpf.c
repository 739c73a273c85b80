// SPDX-License-Identifier: GPL-2.0
/*
 * airtcp timeloss: a time-driven good/bad loss channel on a tc egress hook.
 *
 * netem decides losses per packet, so its Gilbert-Elliott states last a
 * number of *packets*.  Huang/Ferng's channel holds its states for
 * exponentially distributed *times* (good mean 100 ms, bad 1-10 ms), and a
 * handoff takes the link down for a fixed time.  Here the state is that of
 * the continuous-time process at the instant each packet reaches the hook:
 * the chain is advanced lazily, state by state, up to the packet's arrival
 * time, so idle periods and packet spacing do not distort it.  The sequence
 * of holding times depends only on the seed (its own generator), not on
 * the traffic.
 *
 * The testbed attaches it at the receiving end's ingress, so that the
 * state is that of the instant the packet was on the air (arrival minus
 * the link's propagation delay, cfg.offset_ns) rather than the instant it
 * entered the sender's queue, and a lost packet is lost silently: a drop
 * on the sender's egress hook would be returned to a local sender as
 * NET_XMIT_DROP (ENOBUFS), which a base-station daemon rightly reads as
 * its own queue overflowing.  For the same reason a loss is TC_ACT_STOLEN
 * (consumed, "success") rather than TC_ACT_SHOT on either hook.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#include "timeloss.h"

const volatile struct tl_config cfg SEC(".rodata.cfg") = {};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tl_chan);
} chan_map SEC(".maps");

/* xorshift64*: small, good enough for holding times and coin flips. */
static __always_inline __u64 next_random(__u64 *state)
{
	__u64 x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static __always_inline __u64 holding_ns(struct tl_chan *chan, __u32 state)
{
	__u32 idx;

	if (cfg.deterministic)
		return cfg.mean_ns[state & 1];
	idx = (next_random(&chan->rng_time) >> (64 - TL_EXPQ_BITS)) & (TL_EXPQ_SIZE - 1);
	return (cfg.mean_ns[state & 1] * cfg.expq[idx]) >> TL_Q16;
}

/* Outages: down for mean_ns[BAD] at first_good_ns + k * period. */
static __always_inline __u32 deterministic_state(__u64 since_start)
{
	__u64 period = cfg.mean_ns[TL_GOOD] + cfg.mean_ns[TL_BAD];

	if (since_start < cfg.first_good_ns || !period)
		return TL_GOOD;
	return (since_start - cfg.first_good_ns) % period < cfg.mean_ns[TL_BAD] ? TL_BAD : TL_GOOD;
}

static __always_inline void advance(struct tl_chan *chan, __u64 now)
{
	int i;

	if (!chan->started) {
		chan->started = 1;
		chan->rng_time = cfg.seed * 2 + 1;
		chan->rng_loss = (cfg.seed ^ 0x9E3779B97F4A7C15ULL) | 1;
		chan->bad = TL_GOOD;
		chan->next_switch_ns = cfg.start_ns + holding_ns(chan, TL_GOOD);
	}
	for (i = 0; i < TL_CATCHUP; i++) {
		if (now < chan->next_switch_ns)
			return;
		chan->bad ^= 1;
		chan->next_switch_ns += holding_ns(chan, chan->bad);
		chan->switches++;
	}
	if (now >= chan->next_switch_ns) {
		/* Idle for more than TL_CATCHUP states: the state at an
		 * instant that far away is a draw from the stationary law,
		 * and the residual holding time is again exponential.
		 */
		chan->bad = (__u32)next_random(&chan->rng_time) < cfg.pi_bad ? TL_BAD : TL_GOOD;
		chan->next_switch_ns = now + holding_ns(chan, chan->bad);
		chan->resyncs++;
	}
}

SEC("tc")
int timeloss(struct __sk_buff *skb)
{
	__u64 now = bpf_ktime_get_ns() - cfg.offset_ns;
	struct tl_chan *chan;
	__u32 key = 0, state;
	int verdict = TC_ACT_OK;

	if (now < cfg.start_ns)
		return TC_ACT_OK;
	chan = bpf_map_lookup_elem(&chan_map, &key);
	if (!chan)
		return TC_ACT_OK;

	bpf_spin_lock(&chan->lock);
	if (cfg.deterministic) {
		state = deterministic_state(now - cfg.start_ns);
		if (state != chan->bad)
			chan->switches++;
		chan->bad = state;
		if (!chan->started) {
			chan->started = 1;
			chan->rng_loss = (cfg.seed ^ 0x9E3779B97F4A7C15ULL) | 1;
		}
	} else {
		advance(chan, now);
		state = chan->bad & 1;
	}
	chan->packets[state]++;
	if (cfg.loss_all[state] ||
	    (cfg.loss[state] && (__u32)next_random(&chan->rng_loss) < cfg.loss[state])) {
		chan->dropped[state]++;
		verdict = TC_ACT_STOLEN;
	}
	bpf_spin_unlock(&chan->lock);
	return verdict;
}

char LICENSE[] SEC("license") = "GPL";
