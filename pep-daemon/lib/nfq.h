/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One NFQUEUE, through libmnl and libnetfilter_queue's message helpers, in
 * three parts: setting the queue up, the receive loop (every packet
 * message parsed into a struct nfqueue_packet and handed to a callback), and
 * verdicts, batched: held until the round ends or flush_bound of them wait,
 * then sent in one sendmsg, every run of plain accepts as one
 * NFQNL_MSG_VERDICT_BATCH message.  It knows nothing of what the packets
 * are for.  One struct nfqueue per queue, used by one thread; several
 * queues are several structs.
 */
#ifndef AIRTCP_NFQ_H
#define AIRTCP_NFQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mnl_socket;

/* The most bytes of a packet the kernel copies (NFQNL_MAX_COPY_RANGE). */
#define NFQUEUE_COPY_ALL 0xffff

struct nfqueue_params {
	uint16_t queue;
	uint32_t maxlen;	/* kernel queue length, packets */
	uint64_t socket_buffer;	/* netlink receive buffer, bytes */
	/*
	 * Bytes of each packet copied to us (0: NFQUEUE_COPY_ALL).  Fewer
	 * when only headers are needed: a longer packet arrives cut, with its
	 * full length in cap_len, and its verdict must not carry bytes.
	 */
	uint32_t copy_range;
	/* verdicts held before they are sent (0: 1, each at once); a round's end sends them anyway */
	uint32_t flush_bound;
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
	uint32_t mark;		/* NFQA_MARK: the packet's fwmark (0 when it has none) */
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
	NFQUEUE_REPEAT = 4,		/* NF_REPEAT: through the same hook's chain again */
};

struct nfqueue {
	struct mnl_socket *nl;
	uint32_t portid;
	uint16_t queue;
	uint32_t copy_range;
	char *rxbuf;		/* rxslots datagrams of rxlen bytes each */
	size_t rxlen;
	unsigned int rxslots;
	char *txbuf;
	size_t txlen;		/* verdict messages written, not sent yet */
	uint32_t held;		/* verdicts decided since the last send */
	uint32_t flush_bound;
	/*
	 * A run of plain accepts (no new bytes) is one VERDICT_BATCH message
	 * accepting every packet up to the run's last id: only that id is
	 * kept, and the message is written when another kind of verdict
	 * follows (before it: the kernel reinjects in the order pepd decided)
	 * or at the send.  Ids rise (the kernel numbers packets in the order it
	 * queues them, under the queue's lock), so the run's packets are all the
	 * batch can take; a packet whose id does not rise sends what is held
	 * first (nfqueue_receive).
	 */
	bool accept_pending;
	uint32_t accept_max;
	uint32_t last_id;
	bool have_id;
	uint64_t netlink_errors;	/* messages that could not be read, parsed or sent */
	uint64_t id_gaps;	/* packet ids skipped: accepted by the kernel without us (fail-open) */
	uint64_t verdict_sends;	/* sendmsg calls that carried verdicts */
	uint64_t verdict_messages;	/* netlink messages in them (a batch accept is one) */
};

/* Each packet of a round; it must be given its verdict (nfqueue_verdict) before returning. */
typedef void (*nfqueue_packet_fn)(void *ctx, const struct nfqueue_packet *pkt);

/* A closed queue (nfqueue_close is then safe). */
void nfqueue_init(struct nfqueue *q);

/* Bind and configure the queue, non-blocking; on error -1 and one line in err (call nfqueue_close). */
int nfqueue_open(struct nfqueue *q, const struct nfqueue_params *p, char *err, size_t errlen);

/* The memory nfqueue_open allocates (its receive and send buffers). */
size_t nfqueue_memory(void);

/* Is packet id a after b, in the kernel's wrapping order (nfq_id_after)? */
static inline bool nfqueue_id_after(uint32_t a, uint32_t b)
{
	return (int32_t)(b - a) < 0;
}

/* The socket to poll for packets. */
int nfqueue_fd(const struct nfqueue *q);

/*
 * Read at most max_messages netlink messages (until the socket is empty),
 * calling fn for each packet, then send the round's verdicts; returns how
 * many datagrams were read (0: the socket was empty).
 */
unsigned int nfqueue_receive(struct nfqueue *q, unsigned int max_messages, nfqueue_packet_fn fn, void *ctx);

/*
 * Every netlink message of a received datagram lies inside it.  libmnl's
 * own check (mnl_nlmsg_ok) compares the length as an int, so a length of
 * 2^31 or more passes it and the walk leaves the buffer (found by
 * fuzz_nfq); the kernel never sends one, and a datagram that has one is
 * refused whole (netlink_errors).
 */
bool nfqueue_datagram_valid(const void *buf, size_t len);

/*
 * Queue a verdict for packet id, with a replacement for its bytes when
 * payload is not NULL; sent when flush_bound verdicts wait, or at the
 * round's end.
 */
void nfqueue_verdict(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v, const uint8_t *payload, uint32_t len);

/*
 * Queue a verdict that also sets the packet's fwmark (NFQA_MARK): with
 * NFQUEUE_REPEAT the packet goes through the chain that queued it again,
 * now with that mark, where a rule can act on it (save it to the
 * connection's mark).
 */
void nfqueue_verdict_mark(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v, uint32_t mark);

/* Send the verdicts queued so far. */
void nfqueue_flush(struct nfqueue *q);

/* Unbind and free; idempotent. */
void nfqueue_close(struct nfqueue *q);

#endif
