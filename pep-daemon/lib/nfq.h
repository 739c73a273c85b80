/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One NFQUEUE, through libmnl and libnetfilter_queue's message helpers, in
 * three parts: setting the queue up, the receive loop (every packet
 * message parsed into a struct nfqueue_packet and handed to a callback), and
 * verdicts, batched into one netlink message per round.  It knows nothing
 * of what the packets are for.  One struct nfqueue per queue, used by one
 * thread; several queues are several structs.
 */
#ifndef AIRTCP_NFQ_H
#define AIRTCP_NFQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mnl_socket;
struct mnl_nlmsg_batch;

struct nfqueue_params {
	uint16_t queue;
	uint32_t maxlen;	/* kernel queue length, packets */
	uint64_t socket_buffer;	/* netlink receive buffer, bytes */
	bool fail_open;		/* NFQA_CFG_F_FAIL_OPEN: accept what cannot be queued */
	bool gso;		/* NFQA_CFG_F_GSO: take GSO/GRO super-packets whole */
};

/* A queued packet as the kernel described it (data is NULL if it sent no payload). */
struct nfqueue_packet {
	uint32_t id;
	const uint8_t *data;
	uint32_t len;
	uint32_t cap_len;	/* the packet's full length if data was cut short, else 0 */
	uint32_t indev, outdev;	/* ifindex, 0 when none (a bridge port's bridge, for bridged packets) */
	uint32_t physindev, physoutdev;	/* bridged packets: the bridge ports (0 when none) */
	uint8_t family;		/* NFPROTO_IPV4, _IPV6, _BRIDGE: the hook's family */
	uint8_t hook;		/* NF_INET_* or NF_BR_*: where the packet was queued */
	bool gso;		/* NFQA_SKB_GSO: a super-packet */
	/*
	 * NFQA_SKB_CSUMNOTREADY: the TCP checksum field holds only the
	 * pseudo-header's sum (CHECKSUM_PARTIAL: a packet the kernel built or
	 * verified itself, e.g. GRO's; it completes the sum on output).
	 */
	bool csum_not_ready;
	/*
	 * NFQA_SKB_CSUM_NOTVERIFIED: nobody has checked the checksum.  Its
	 * absence says the kernel (or the NIC) verified it only at hooks up to
	 * FORWARD (nfnetlink_queue.c: nfqnl_build_packet_message).
	 */
	bool csum_not_verified;
};

enum nfqueue_verdict {
	NFQUEUE_DROP = 0,		/* NF_DROP */
	NFQUEUE_ACCEPT = 1,		/* NF_ACCEPT */
};

struct nfqueue {
	struct mnl_socket *nl;
	uint32_t portid;
	uint16_t queue;
	char *rxbuf;
	size_t rxlen;
	char *txbuf;
	struct mnl_nlmsg_batch *batch;
	uint32_t last_id;
	bool have_id;
	uint64_t netlink_errors;	/* messages that could not be read, parsed or sent */
	uint64_t id_gaps;	/* packet ids skipped: accepted by the kernel without us (fail-open) */
};

/* Each packet of a round; it must be given its verdict (nfqueue_verdict) before returning. */
typedef void (*nfqueue_packet_fn)(void *ctx, const struct nfqueue_packet *pkt);

/* A closed queue (nfqueue_close is then safe). */
void nfqueue_init(struct nfqueue *q);

/* Bind and configure the queue, non-blocking; on error -1 and one line in err (call nfqueue_close). */
int nfqueue_open(struct nfqueue *q, const struct nfqueue_params *p, char *err, size_t errlen);

/* The memory nfqueue_open allocates (its receive and send buffers). */
size_t nfqueue_memory(void);

/* The socket to poll for packets. */
int nfqueue_fd(const struct nfqueue *q);

/*
 * Read at most max_messages netlink messages (until the socket is empty),
 * calling fn for each packet, then send the round's verdicts.
 */
void nfqueue_receive(struct nfqueue *q, unsigned int max_messages, nfqueue_packet_fn fn, void *ctx);

/*
 * Every netlink message of a received datagram lies inside it.  libmnl's
 * own check (mnl_nlmsg_ok) compares the length as an int, so a length of
 * 2^31 or more passes it and the walk leaves the buffer (found by
 * fuzz_nfq); the kernel never sends one, and a datagram that has one is
 * refused whole (netlink_errors).
 */
bool nfqueue_datagram_valid(const void *buf, size_t len);

/* Queue a verdict for packet id, with a replacement for its bytes when payload is not NULL. */
void nfqueue_verdict(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v, const uint8_t *payload, uint32_t len);

/* Send the verdicts queued so far. */
void nfqueue_flush(struct nfqueue *q);

/* Unbind and free; idempotent. */
void nfqueue_close(struct nfqueue *q);

#endif
