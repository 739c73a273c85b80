/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The running arqd: a TUN device (IP packets in and out of this host's
 * stack), packet sockets on the wireless interface (link frames), the
 * routes that steer traffic into the TUN device, the sender and receiver
 * state machines, and the shared event loop.
 */
#ifndef ARQD_H
#define ARQD_H

#include <linux/if_packet.h>
#include <stdbool.h>
#include <stdint.h>

#include "arq_config.h"
#include "arq_frame.h"
#include "arq_rx.h"
#include "arq_tx.h"
#include "ctl.h"
#include "evloop.h"
#include "json.h"
#include "routes.h"

#define ARQD_LINK_COUNTERS(X)                                                                        \
	X(frames_in, "frames of arqd's EtherType received from peer_mac")                          \
	X(foreign_frames, "frames of arqd's EtherType from any other address: dropped unread")     \
	X(data_frames_in, "valid data frames received")                                             \
	X(acks_in, "valid link acks received")                                                      \
	X(status_in, "valid status frames received")                                                \
	X(rejected, "frames rejected by the parser (see rejected_by_reason)")                      \
	X(data_frames_out, "data frames sent (new and retransmitted)")                              \
	X(control_frames_out, "acks and status frames sent")                                       \
	X(overhead_bytes, "link overhead sent: Ethernet and frame headers of data frames, whole acks and status frames") \
	X(bytes_out, "bytes sent on the link (Ethernet header included)")                          \
	X(send_blocked, "data sends deferred: link_queue full (socket send buffer)")               \
	X(send_paced, "data sends deferred by the pacer (link_rate)")                              \
	X(send_refused, "data sends refused by the wireless qdisc (full), retried")                \
	X(send_errors, "data sends that failed otherwise (counted as sent: the ARQ recovers)")     \
	X(control_dropped, "acks or status frames that could not be sent (feedback is repeated)")  \
	X(tun_paused, "times reading from the TUN device stopped because the window was full")    \
	X(tun_write_errors, "packets the TUN device refused on delivery")

struct arqd_link_counters {
#define ARQD_FIELD(name, desc) uint64_t name;
	ARQD_LINK_COUNTERS(ARQD_FIELD)
#undef ARQD_FIELD
	uint64_t rejected_by[ARQ__PARSE_COUNT];
};

struct arqd {
	struct arq_config cfg;
	struct evloop loop;
	struct ctl_server ctl;
	struct ctl_snapshot snap;	/* stats: the control thread asks, the loop renders between two frames */
	struct arq_tx tx;
	struct arq_rx rx;
	bool tx_ok, rx_ok;
	int tun_fd, data_fd, ctl_fd;
	int ifindex, tun_ifindex;
	uint32_t link_ifmtu, tun_mtu, frames_per_packet;
	struct sockaddr_ll peer;
	bool tun_reading, out_blocked;
	uint64_t retry_at;
	uint64_t pace_next_ns;	/* when the paced link is free */
	uint64_t pace_burst_ns;	/* frames may be sent this far ahead of it (pace_frames link-MTU frames) */
	struct arq_routes routes;
	uint64_t started_ns;
	struct arqd_link_counters cnt;
	uint8_t buf[65536 + 64];
	uint8_t frame[65536 + 64];
	uint8_t ctl_frame[4096];
};

int arqd_start(struct arqd *d, const struct arq_config *cfg, char *err, size_t errlen);
int arqd_run(struct arqd *d);
void arqd_stop(struct arqd *d);
/* The statistics' objects (arqd, link, sender, receiver), in the loop's thread. */
void arqd_report(struct arqd *d, struct json_out *j);

#endif
