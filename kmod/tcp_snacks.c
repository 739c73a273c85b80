// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcp_snacks: the SNACK-S congestion control (Cheng & Lin, §IV.C).
 *
 * Reno's growth (slow start, then one packet per RTT), with two changes:
 *
 *  - startup (the initial slow start, and the slow start after a
 *    timeout): once per round trip the bandwidth estimate sigma of eq. 5
 *    is formed and the slow-start threshold set to W_t = sigma * t
 *    (eq. 6, t the minimum RTT), so slow start ends near the path's
 *    capacity instead of at the first loss;
 *  - on entering fast recovery (triple dupacks): W_t = W / 2 (eq. 8) as
 *    Reno, but when the recovery ends the window becomes
 *    W = max(W_t, phi * t) (eq. 9), phi = L / T (eq. 7) the packets
 *    delivered between the last two loss events over the time between
 *    them: a random loss on a wireless hop does not halve a window the
 *    path can carry.
 *
 * The arithmetic is in snacks_est.h (unit-tested in userspace).  The
 * estimate is shown by `ss -tin` through INET_DIAG_BBRINFO, the only
 * diag record with a bandwidth field, so ss labels it "bbr:(bw:..)".
 * Selected with `sysctl net.ipv4.tcp_congestion_control=snacks` or
 * `iperf3 -C snacks` (the autoloader asks for "tcp-snacks").
 */
#include <linux/inet_diag.h>
#include <linux/module.h>
#include <net/tcp.h>

#include "snacks_est.h"

/*
 * Times are tp->tcp_mstamp's 64-bit microseconds: a 32-bit copy wraps
 * after 71.6 minutes between two losses, and the interval then looks
 * short and the rate huge.
 */
struct snacks {
	u64 first_ack_us;	/* first and last ACK of the round */
	u64 last_ack_us;
	u64 loss_us;		/* the last loss event (or the start) */
	u64 b_prev;		/* backlog of the previous round (fixed point) */
	u64 sigma;		/* startup estimate, packets/s (fixed point) */
	u64 phi;		/* long-interval estimate, idem */
	u32 round_end;		/* the round ends when snd_una passes this */
	u32 round_cwnd;		/* W: the window at the round's start */
	u32 round_delivered;	/* tp->delivered at the round's start */
	u32 loss_delivered;	/* tp->delivered then */
	u32 target;		/* eq. 9's window, for the end of recovery */
	u8 rounds;		/* rounds measured in this startup */
	u8 in_round;
};

static u64 snacks_now_us(const struct tcp_sock *tp)
{
	return tp->tcp_mstamp;
}

static void snacks_new_round(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct snacks *ca = inet_csk_ca(sk);

	ca->round_end = tp->snd_nxt;
	ca->round_cwnd = tcp_snd_cwnd(tp);
	ca->round_delivered = tp->delivered;
	ca->in_round = 0;
}

static void snacks_init(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct snacks *ca = inet_csk_ca(sk);

	memset(ca, 0, sizeof(*ca));
	ca->loss_us = snacks_now_us(tp);
	ca->loss_delivered = tp->delivered;
	snacks_new_round(sk);
}

/* Every ACK: the span of this round's ACK arrivals; at its end, sigma. */
static void snacks_pkts_acked(struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct snacks *ca = inet_csk_ca(sk);
	u32 t = tcp_min_rtt(tp), rtt, w_acked;
	u64 now = snacks_now_us(tp);

	if (sample->pkts_acked <= 0)
		return;
	if (!ca->in_round) {
		ca->first_ack_us = now;
		ca->in_round = 1;
	}
	ca->last_ack_us = now;
	if (before(tp->snd_una, ca->round_end))
		return;

	/* A round trip is over: eq. 5 from what it showed. */
	rtt = sample->rtt_us > 0 ? sample->rtt_us : tp->srtt_us >> 3;
	w_acked = tp->delivered - ca->round_delivered;
	if (t != ~0U && t && rtt) {
		ca->sigma = snacks_sigma(ca->round_cwnd, w_acked, t, rtt,
					 snacks_elapsed_us(ca->last_ack_us,
							   ca->first_ack_us),
					 &ca->b_prev);
		if (ca->rounds < U8_MAX)
			ca->rounds++;
	}
	snacks_new_round(sk);
}

static void snacks_cong_avoid(struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct snacks *ca = inet_csk_ca(sk);
	u32 t = tcp_min_rtt(tp);

	/*
	 * Startup: W_t = sigma t (eq. 6), once two rounds have been seen
	 * (the first one starts from an idle path and says little) and the
	 * last one showed a backlog of at least a packet.  Before the flow
	 * reaches the bottleneck there is no backlog, mu of eq. 4 is just
	 * lambda = W / t, our own rate, and sigma t ~ W would end slow start
	 * at whatever window it has reached (seen in the first evaluation:
	 * slow start ended near 10 packets on a 100-packet path).
	 */
	if (tcp_in_slow_start(tp) && ca->rounds >= 2 && ca->sigma &&
	    ca->b_prev >= SNACKS_ONE_PACKET && t != ~0U) {
		u64 wt = snacks_window(ca->sigma, t);

		tp->snd_ssthresh = clamp_t(u64, wt, 2, tp->snd_cwnd_clamp);
	}
	tcp_reno_cong_avoid(sk, ack, acked);
}

/*
 * Loss (triple dupacks, or a timeout): eqs. 7 and 8, and eq. 9's window
 * for the end of the recovery, never above the window now (snacks_est.h).
 */
static u32 snacks_ssthresh(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct snacks *ca = inet_csk_ca(sk);
	u64 now = snacks_now_us(tp);
	struct snacks_loss loss;

	loss = snacks_on_loss(tcp_snd_cwnd(tp), tp->snd_cwnd_clamp,
			      tcp_min_rtt(tp), tp->delivered - ca->loss_delivered,
			      snacks_elapsed_us(now, ca->loss_us));
	ca->phi = loss.phi;
	ca->target = loss.target;
	ca->loss_us = now;
	ca->loss_delivered = tp->delivered;
	return loss.ssthresh;
}

static void snacks_cwnd_event(struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct snacks *ca = inet_csk_ca(sk);

	switch (event) {
	case CA_EVENT_COMPLETE_CWR:
		/* W = max(W_t, phi t) (eq. 9); W_t stays the threshold. */
		if (ca->target > tcp_snd_cwnd(tp))
			tcp_snd_cwnd_set(tp, ca->target);
		ca->target = 0;
		break;
	case CA_EVENT_LOSS:
		/* A timeout: a new startup phase measures afresh. */
		ca->rounds = 0;
		ca->b_prev = 0;
		ca->target = 0;
		snacks_new_round(sk);
		break;
	default:
		break;
	}
}

/* `ss -tin`: bw = the current estimate in bytes/s, mrtt = t. */
static size_t snacks_get_info(struct sock *sk, u32 ext, int *attr,
			      union tcp_cc_info *info)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct snacks *ca = inet_csk_ca(sk);

	/* ss asks for VEGASINFO only; answer that request too, as BBR does. */
	if (ext & (1 << (INET_DIAG_BBRINFO - 1)) ||
	    ext & (1 << (INET_DIAG_VEGASINFO - 1))) {
		u64 rate = ca->phi ? ca->phi : ca->sigma;
		u64 bw = (rate * tp->mss_cache) >> SNACKS_RATE_SHIFT;

		memset(&info->bbr, 0, sizeof(info->bbr));
		info->bbr.bbr_bw_lo = (u32)bw;
		info->bbr.bbr_bw_hi = (u32)(bw >> 32);
		info->bbr.bbr_min_rtt = tcp_min_rtt(tp);
		*attr = INET_DIAG_BBRINFO;
		return sizeof(info->bbr);
	}
	return 0;
}

static struct tcp_congestion_ops tcp_snacks __read_mostly = {
	.init		= snacks_init,
	.ssthresh	= snacks_ssthresh,
	.cong_avoid	= snacks_cong_avoid,
	.undo_cwnd	= tcp_reno_undo_cwnd,
	.cwnd_event	= snacks_cwnd_event,
	.pkts_acked	= snacks_pkts_acked,
	.get_info	= snacks_get_info,
	/*
	 * Not TCP_CONG_NON_RESTRICTED: like every algorithm but reno and the
	 * boot default, a socket picks it only with CAP_NET_ADMIN (in its
	 * namespace's user namespace), or once the administrator lists it in
	 * net.ipv4.tcp_allowed_congestion_control (which also lets it be a
	 * namespace's default; the testbed does so).  Its windows are
	 * bounded, but it cuts less than Reno on a loss, and whether that is
	 * fair to others on a shared bottleneck is the administrator's call.
	 */
	.owner		= THIS_MODULE,
	.name		= "snacks",
};

static int __init snacks_register(void)
{
	BUILD_BUG_ON(sizeof(struct snacks) > ICSK_CA_PRIV_SIZE);
	return tcp_register_congestion_control(&tcp_snacks);
}

static void __exit snacks_unregister(void)
{
	tcp_unregister_congestion_control(&tcp_snacks);
}

module_init(snacks_register);
module_exit(snacks_unregister);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("airtcp developers");
MODULE_DESCRIPTION("SNACK-S congestion control (Cheng & Lin): bandwidth-estimated startup and loss response");
MODULE_VERSION(AIRTCP_VERSION);
MODULE_ALIAS("tcp-snacks");
