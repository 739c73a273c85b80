// SPDX-License-Identifier: GPL-2.0-only
#include "admit.h"
#include "csum.h"

#define HOOK_FORWARD 2		/* NF_INET_FORWARD == NF_BR_FORWARD */

static bool one_of(const uint32_t *set, uint32_t n, uint32_t ifindex)
{
	uint32_t i;

	if (!ifindex)
		return false;
	for (i = 0; i < n; i++)
		if (set[i] == ifindex)
			return true;
	return false;
}

enum admit_where admit_where(const struct pep_ifaces *w, const struct pep_devs *d)
{
	bool to = one_of(w->port, w->n, d->physoutdev) || one_of(w->port, w->n, d->outdev);
	bool from = one_of(w->port, w->n, d->physindev) || one_of(w->port, w->n, d->indev) ||
		    (!d->physindev && one_of(w->bridge, w->n, d->indev));

	if (to && from)
		return WHERE_BETWEEN;
	if (to)
		return WHERE_TO_WIRELESS;
	return from ? WHERE_FROM_WIRELESS : WHERE_FOREIGN;
}

enum admit_csum admit_checksum(const struct pkt *p, bool not_ready, bool not_verified, uint8_t hook)
{
	if (p->family == 4 && !csum_ipv4_header_ok(p->data, p->tcp_off))
		return CSUM_BAD;	/* IPv4 options are part of the header (tcp_off): all of it counts */
	if (not_ready)
		return CSUM_PARTIAL;
	if (!not_verified && hook <= HOOK_FORWARD)
		return CSUM_TRUSTED;
	if (p->captured < p->len)
		return CSUM_UNVERIFIABLE;	/* the bytes it covers are not here */
	return csum_tcp_ok(p->data + p->tcp_off, p->len - p->tcp_off, p->family, p->src, p->dst) ? CSUM_VERIFIED
												    : CSUM_BAD;
}

enum admit_flow admit_flow(const struct pkt *p, enum pep_dir dir, bool adopt_midstream)
{
	if (p->flags & TCPF_RST)
		return ADMIT_IGNORE;
	if (p->flags & TCPF_SYN)
		return ADMIT_SYN;
	if (dir != DIR_TO_WIRELESS || !p->payload_len)
		return ADMIT_IGNORE;
	return adopt_midstream ? ADMIT_MIDSTREAM : ADMIT_NOT_ADOPTED;
}
