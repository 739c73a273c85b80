/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PEPD_RULES_H
#define PEPD_RULES_H

#include <stdint.h>

#include "config.h"

/*
 * Install the queue rules with cfg->rules (auto tries each), spreading
 * over nqueues queues from cfg->queue on, skipping connections marked
 * with bypass (rules_bypass_mark's, computed once by the caller so that
 * the rules and the queues agree; 0: none); *used says which worked.
 * Refused when another queue's rules already claim one of cfg's
 * interfaces.
 */
int rules_install(const struct pep_config *cfg, uint32_t nqueues, uint32_t bypass, enum pep_rules_backend *used,
		  char *err, size_t errlen);

/* Remove what rules_install put in place with that backend. */
void rules_remove(const struct pep_config *cfg, enum pep_rules_backend used);

/* Remove this queue's rules from every backend cfg->rules allows (after a kill -9). */
void rules_remove_all(const struct pep_config *cfg);

/* 1 when a program is bound to NFQUEUE queue (its netlink port id in *portid), 0 when none, -1 unknown. */
int rules_queue_bound(uint32_t queue, uint32_t *portid);

/* The bridge interface name is a port of, or "" when none (len: IF_NAMESIZE at least). */
void rules_bridge_of(const char *name, char *bridge, size_t len);

/*
 * The connection mark pepd's rules skip (cfg->bypass_mark), or 0 when they
 * queue every flow: rules = none, a filter that never steps aside (only pc
 * does), or a wireless interface is a bridge port (bridged frames have no
 * conntrack in the bridge family).
 */
uint32_t rules_bypass_mark(const struct pep_config *cfg);

/* Packets the rules have sent to the queue since they were installed. */
int rules_queued_packets(const struct pep_config *cfg, enum pep_rules_backend used, uint64_t *packets);

#endif
