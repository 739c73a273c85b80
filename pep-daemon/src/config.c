// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

enum key_type {
	K_UINT,		/* decimal or 0x hex, within [min, max] */
	K_BOOL,		/* true/false, yes/no, on/off, 1/0 */
	K_DURATION,	/* number with unit us, ms or s */
	K_SIZE,		/* bytes, optional k/K/KiB, M/MiB, G/GiB (powers of 1024) */
	K_FRACTION,	/* 0.01 or 1% */
	K_ENUM,
	K_STRING,
	K_IFACES,	/* comma- or space-separated interface names */
	K_COPIES,	/* 0..3 or auto */
};

static const char *const filter_names[] = { "passthrough", "snoop", "snoop+", "pc", NULL };
static const char *const rules_names[] = { "auto", "nft", "iptables-nft", "iptables-legacy", "none", NULL };
static const char *const forward_names[] = { "inject", "accept", NULL };

struct key_def {
	const char *name;
	enum key_type type;
	size_t offset;
	size_t size;		/* of the field: integers of 4 or 8 bytes */
	uint64_t min, max;	/* integers, durations (ns), sizes (bytes) */
	const char *const *names;	/* K_ENUM */
	const char *def;	/* default, parsed by the same code as any value */
	const char *help;
};

#define F(field) offsetof(struct pep_config, field), sizeof(((struct pep_config *)0)->field)
#define MS 1000000ULL
#define S_ 1000000000ULL

static const struct key_def keys[] = {
	/* the daemon */
	{ "filter", K_ENUM, F(filter), 0, 0, filter_names, "snoop",
	  "what to run on the flows: passthrough, snoop, snoop+ or pc" },
	{ "wireless", K_IFACES, F(wireless), 0, 0, NULL, "",
	  "the wireless interface(s) of this base station (required); data leaving on them is the downlink" },
	{ "queue", K_UINT, F(queue), 0, 65535, NULL, "0", "NFQUEUE number" },
	{ "rules", K_ENUM, F(rules), 0, 0, rules_names, "auto",
	  "who installs the queue rules: auto (nft, then iptables-nft, then iptables-legacy), one of those, "
	  "or none (you did)" },
	{ "mark", K_UINT, F(mark), 1, 0xffffffffULL, NULL, "0x10000",
	  "fwmark bit(s) on pepd's own packets; the queue rules skip packets carrying them" },
	{ "queue_maxlen", K_UINT, F(queue_maxlen), 16, 1u << 20, NULL, "4096",
	  "kernel queue length in packets; beyond it packets pass without pepd (fail-open)" },
	{ "socket_buffer", K_SIZE, F(socket_buffer), 65536, 1ULL << 30, NULL, "8MiB",
	  "netlink receive buffer (SO_RCVBUFFORCE)" },
	{ "gso", K_BOOL, F(gso), 0, 0, NULL, "false",
	  "take GSO/GRO super-packets whole (NFQA_CFG_F_GSO) instead of having the kernel segment them; "
	  "local retransmissions are re-segmented to the MSS" },
	{ "fail_open", K_BOOL, F(fail_open), 0, 0, NULL, "true",
	  "accept packets the kernel cannot queue to pepd (NFQA_CFG_F_FAIL_OPEN) instead of dropping them" },
	{ "control_socket", K_STRING, F(control_socket), 0, 0, NULL, "",
	  "path of the stats socket (default /run/pepd/pepd-QUEUE.sock)" },
	{ "log_flows", K_BOOL, F(log_flows), 0, 0, NULL, "false", "log each flow's counters when it ends" },
	{ "trace_file", K_STRING, F(trace_file), 0, 0, NULL, "",
	  "debugging: write one line per packet, timer and send (verdict, actions) to this file" },
	/* the flow table */
	{ "max_flows", K_UINT, F(max_flows), 1, 1u << 22, NULL, "4096",
	  "flows tracked at once; further flows pass untracked (flows_untracked)" },
	{ "flow_cache_bytes", K_SIZE, F(flow_cache_bytes), 2048, 1ULL << 30, NULL, "256KiB",
	  "cache bound per flow; segments beyond it pass uncached (cache_full) and their losses are the "
	  "sender's. Size it to the egress queue plus the hop's bandwidth-delay product" },
	{ "total_cache_bytes", K_SIZE, F(total_cache_bytes), 4096, 1ULL << 40, NULL, "64MiB",
	  "cache bound over all flows" },
	{ "idle_timeout", K_DURATION, F(idle_timeout_ns), 1 * S_, 86400 * S_, NULL, "60s",
	  "a flow not seen for this long is forgotten" },
	{ "adopt_midstream", K_BOOL, F(adopt_midstream), 0, 0, NULL, "true",
	  "also act on connections that started before pepd (e.g. after a restart)" },
	/* snoop and snoop+ */
	{ "rtx_thresh", K_UINT, F(rtx_thresh), 1, 16, NULL, "2",
	  "duplicate ACKs (without SACK) or later transmissions SACKed (with SACK) before a cached segment is "
	  "retransmitted locally; 2 because Linux receivers send the odd duplicate ACK without an arrival; "
	  "raise it on a hop that reorders" },
	{ "max_local_rtx", K_UINT, F(max_local_rtx), 1, 32, NULL, "4",
	  "local retransmission rounds per segment before it is left to the sender" },
	{ "rto_initial", K_DURATION, F(rto_initial_ns), 1 * MS, 60 * S_, NULL, "200ms",
	  "local retransmission timeout before the first RTT sample" },
	{ "rto_min", K_DURATION, F(rto_min_ns), 1 * MS, 60 * S_, NULL, "20ms",
	  "lower bound of the local retransmission timeout" },
	{ "rto_max", K_DURATION, F(rto_max_ns), 1 * MS, 60 * S_, NULL, "1s",
	  "upper bound of the local retransmission timeout, backoff included" },
	{ "max_burst", K_UINT, F(max_burst), 1, 32, NULL, "8",
	  "segments retransmitted locally per event at most" },
	{ "use_sack", K_BOOL, F(use_sack), 0, 0, NULL, "true",
	  "read the receiver's SACK blocks to find every hole (when the connection negotiated SACK)" },
	{ "drop_dupacks", K_BOOL, F(drop_dupacks), 0, 0, NULL, "true",
	  "snoop: drop the dupacks (and hold the partial ACKs) of holes repaired here; false leaves the local "
	  "retransmissions but lets every ACK through, like a TCP-unaware link layer" },
	{ "hide_sack", K_BOOL, F(hide_sack), 0, 0, NULL, "true",
	  "blank the SACK option of forwarded ACKs while every hole is cached here" },
	{ "discount_copy_dupacks", K_BOOL, F(discount_copy_dupacks), 0, 0, NULL, "true",
	  "do not count the dupacks drawn by extra copies (off reproduces Snoop+'s false rounds for c >= 3)" },
	{ "ack_acked_rtx", K_BOOL, F(ack_acked_rtx), 0, 0, NULL, "true",
	  "drop sender retransmissions of acknowledged data and answer them with an ACK (Snoop)" },
	{ "window_clamp", K_BOOL, F(window_clamp), 0, 0, NULL, "true",
	  "snoop: cap the window the sender sees at the path's bandwidth-delay product (delivery rate of the "
	  "hop x round trip, plus half of aqm_target of queue), so hiding losses does not let it overrun this "
	  "box's queue" },
	{ "aqm_target", K_DURATION, F(aqm_target_ns), 0, 10 * S_, NULL, "40ms",
	  "snoop: queueing delay on the wireless hop above which the sender gets a congestion signal (one "
	  "dropped segment, left to it), since hiding losses also hides congestion; 0ms: off" },
	{ "aqm_interval", K_DURATION, F(aqm_interval_ns), 1 * MS, 10 * S_, NULL, "100ms",
	  "snoop: the delay must stay above aqm_target this long before a signal, and signals are at least "
	  "this far apart" },
	{ "forward", K_ENUM, F(forward), 0, 0, forward_names, "inject",
	  "snoop: how cached data leaves: inject (pepd sends it, so a full egress queue is seen and that "
	  "congestion loss left to the sender) or accept (the kernel forwards the original; drops at this "
	  "box's own queue are then repaired locally and hidden, Snoop's classic weakness)" },
	{ "rtx_priority", K_UINT, F(rtx_priority), 0, 0xffffffffULL, NULL, "0",
	  "SO_PRIORITY of local retransmissions; with a priority-aware egress qdisc they go ahead of new data "
	  "(0: same queue as everything else)" },
	{ "copies", K_COPIES, F(copies), 0, 3, NULL, "2",
	  "snoop+: extra copies per local retransmission, 0..3, or auto (chosen from the measured loss)" },
	{ "adaptive_target", K_FRACTION, F(adaptive_target), 0, 0, NULL, "0.001",
	  "snoop+ auto: largest acceptable probability that every copy of a round is lost" },
	{ "adaptive_window", K_UINT, F(adaptive_window), 10, 100000, NULL, "200",
	  "snoop+ auto: samples the loss estimate averages over" },
	/* packet controller */
	{ "dupack_thresh", K_UINT, F(dupack_thresh), 3, 64, NULL, "6",
	  "pc: dupacks from the receiver before the sender may see its third (3 = transparent)" },
	{ "ack_every_rtx", K_UINT, F(ack_every_rtx), 1, 64, NULL, "2",
	  "pc: send the fixed host an ACK for every this many drops of the same acknowledged segment" },
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static void set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void canonical(const char *in, char *out, size_t outlen)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < outlen; i++)
		out[i] = in[i] == '-' ? '_' : in[i];
	out[i] = '\0';
}

static const struct key_def *find_key(const char *name)
{
	char canon[64];
	size_t i;

	canonical(name, canon, sizeof(canon));
	for (i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].name, canon) == 0)
			return &keys[i];
	return NULL;
}

bool config_is_key(const char *name)
{
	return find_key(name) != NULL;
}

static void store_int(struct pep_config *cfg, const struct key_def *k, uint64_t v)
{
	char *field = (char *)cfg + k->offset;

	if (k->size == sizeof(uint64_t)) {
		uint64_t x = v;

		memcpy(field, &x, sizeof(x));
	} else {
		uint32_t x = (uint32_t)v;

		memcpy(field, &x, sizeof(x));
	}
}

static bool parse_u64(const char *s, uint64_t *out, char **rest)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return false;
	*out = v;
	*rest = end;
	return true;
}

/* "1.5ms" -> ns; unit required */
static bool parse_duration(const char *s, uint64_t *ns)
{
	char *end;
	double v;
	double scale;

	if (!isdigit((unsigned char)*s) && *s != '.')
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return false;
	if (strcmp(end, "us") == 0)
		scale = 1e3;
	else if (strcmp(end, "ms") == 0)
		scale = 1e6;
	else if (strcmp(end, "s") == 0)
		scale = 1e9;
	else
		return false;
	if (v * scale > 1e18)
		return false;
	*ns = (uint64_t)llround(v * scale);
	return true;
}

static bool parse_size(const char *s, uint64_t *bytes)
{
	static const struct {
		const char *suffix;
		uint64_t mult;
	} units[] = {
		{ "", 1 }, { "k", 1024 }, { "K", 1024 }, { "KiB", 1024 }, { "M", 1ULL << 20 }, { "MiB", 1ULL << 20 },
		{ "G", 1ULL << 30 }, { "GiB", 1ULL << 30 },
	};
	uint64_t v;
	char *rest;
	size_t i;

	if (!parse_u64(s, &v, &rest))
		return false;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(rest, units[i].suffix) == 0) {
			if (v > UINT64_MAX / units[i].mult)
				return false;
			*bytes = v * units[i].mult;
			return true;
		}
	}
	return false;
}

static bool parse_bool(const char *s, bool *b)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (strcmp(s, yes[i]) == 0) {
			*b = true;
			return true;
		}
		if (strcmp(s, no[i]) == 0) {
			*b = false;
			return true;
		}
	}
	return false;
}

static bool valid_ifname(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len >= PEP_IFNAMSIZ)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_.@", s[i]))
			return false;
	return true;
}

static int set_value(struct pep_config *cfg, const struct key_def *k, const char *value, const char *where,
		     char *err, size_t errlen)
{
	char *field = (char *)cfg + k->offset;
	uint64_t v = 0;
	char *rest = NULL;
	const char *problem = NULL;
	char range[96] = "";
	size_t i;

	switch (k->type) {
	case K_UINT:
		if (!parse_u64(value, &v, &rest) || *rest)
			problem = "expected a whole number";
		break;
	case K_DURATION:
		if (!parse_duration(value, &v))
			problem = "expected a duration with a unit (us, ms, s)";
		break;
	case K_SIZE:
		if (!parse_size(value, &v))
			problem = "expected a size in bytes (suffix k, M, G or KiB, MiB, GiB)";
		break;
	case K_BOOL: {
		bool b;

		if (!parse_bool(value, &b)) {
			problem = "expected true or false";
			break;
		}
		*(bool *)field = b;
		return 0;
	}
	case K_FRACTION: {
		char *end;
		double d;

		errno = 0;
		d = strtod(value, &end);
		if (errno || end == value || !isfinite(d)) {
			problem = "expected a fraction like 0.01 or 1%";
			break;
		}
		if (strcmp(end, "%") == 0)
			d /= 100.0;
		else if (*end) {
			problem = "expected a fraction like 0.01 or 1%";
			break;
		}
		if (d <= 0.0 || d >= 1.0) {
			problem = "must lie strictly between 0 and 1";
			break;
		}
		*(double *)field = d;
		return 0;
	}
	case K_ENUM:
		for (i = 0; k->names[i]; i++) {
			if (strcmp(value, k->names[i]) == 0) {
				*(int *)field = (int)i;
				return 0;
			}
		}
		problem = "not one of the choices (see pepd --help)";
		break;
	case K_STRING:
		if (strlen(value) >= PEP_PATH_MAX) {
			problem = "too long";
			break;
		}
		strcpy(field, value);
		return 0;
	case K_IFACES: {
		struct pep_config tmp;
		const char *s = value;

		tmp.nwireless = 0;
		while (*s) {
			size_t len;

			while (*s == ',' || isspace((unsigned char)*s))
				s++;
			if (!*s)
				break;
			len = strcspn(s, ", \t");
			if (!valid_ifname(s, len)) {
				problem = "not an interface name";
				break;
			}
			if (tmp.nwireless == PEP_MAX_IFACES) {
				problem = "too many interfaces (at most 8)";
				break;
			}
			memcpy(tmp.wireless[tmp.nwireless], s, len);
			tmp.wireless[tmp.nwireless][len] = '\0';
			tmp.nwireless++;
			s += len;
		}
		if (problem)
			break;
		memcpy(cfg->wireless, tmp.wireless, sizeof(tmp.wireless[0]) * tmp.nwireless);
		cfg->nwireless = tmp.nwireless;
		return 0;
	}
	case K_COPIES:
		if (strcmp(value, "auto") == 0) {
			*(int *)field = COPIES_AUTO;
			return 0;
		}
		if (!parse_u64(value, &v, &rest) || *rest || v > 3) {
			problem = "expected 0, 1, 2, 3 or auto";
			break;
		}
		*(int *)field = (int)v;
		return 0;
	}
	if (!problem && (v < k->min || v > k->max)) {
		if (k->type == K_DURATION)
			snprintf(range, sizeof(range), "must lie between %gms and %gms", (double)k->min / 1e6,
				 (double)k->max / 1e6);
		else
			snprintf(range, sizeof(range), "must lie between %llu and %llu", (unsigned long long)k->min,
				 (unsigned long long)k->max);
		problem = range;
	}
	if (problem) {
		set_err(err, errlen, "%s: %s = %s: %s", where, k->name, value, problem);
		return -1;
	}
	store_int(cfg, k, v);
	return 0;
}

int config_set(struct pep_config *cfg, const char *key, const char *value, const char *where, char *err,
	       size_t errlen)
{
	const struct key_def *k = find_key(key);

	if (!k) {
		set_err(err, errlen, "%s: %s = %s: unknown key (pepd --help lists them)", where, key, value);
		return -1;
	}
	return set_value(cfg, k, value, where, err, errlen);
}

void config_defaults(struct pep_config *cfg)
{
	size_t i;
	char err[PEP_ERR_MAX];

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < NKEYS; i++)
		if (set_value(cfg, &keys[i], keys[i].def, "default", err, sizeof(err)) < 0)
			abort();	/* a default the parser refuses is a bug in the table */
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

int config_load_text(struct pep_config *cfg, const char *text, size_t len, const char *name, char *err,
		     size_t errlen)
{
	char line[1024], where[PEP_PATH_MAX + 32];
	size_t pos = 0, lineno = 0;

	while (pos < len) {
		size_t n = 0;
		char *eq, *key, *value, *hash;

		lineno++;
		while (pos < len && text[pos] != '\n') {
			if (text[pos] == '\0') {
				set_err(err, errlen, "%s:%zu: a NUL byte: not a text file", name, lineno);
				return -1;
			}
			if (n + 1 < sizeof(line))
				line[n++] = text[pos];
			else {
				set_err(err, errlen, "%s:%zu: line longer than %zu bytes", name, lineno,
					sizeof(line) - 1);
				return -1;
			}
			pos++;
		}
		pos++;	/* the newline */
		line[n] = '\0';
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		key = trim(line);
		if (!*key)
			continue;
		snprintf(where, sizeof(where), "%s:%zu", name, lineno);
		eq = strchr(key, '=');
		if (!eq) {
			set_err(err, errlen, "%s: %s: expected key = value", where, key);
			return -1;
		}
		*eq = '\0';
		value = trim(eq + 1);
		key = trim(key);
		if (config_set(cfg, key, value, where, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int config_load_file(struct pep_config *cfg, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0, cap = 0, n;
	int ret;

	if (!f) {
		set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (cap - len < 4096) {
			char *grown;

			if (cap > (1u << 20)) {
				set_err(err, errlen, "%s: larger than 1 MiB: not a configuration file", path);
				free(text);
				fclose(f);
				return -1;
			}
			grown = realloc(text, cap + 8192);
			if (!grown) {
				free(text);
				fclose(f);
				set_err(err, errlen, "%s: out of memory", path);
				return -1;
			}
			text = grown;
			cap += 8192;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	ret = ferror(f) ? -1 : 0;
	fclose(f);
	if (ret < 0) {
		set_err(err, errlen, "%s: read error", path);
		free(text);
		return -1;
	}
	ret = config_load_text(cfg, text, len, path, err, errlen);
	free(text);
	return ret;
}

int config_check(const struct pep_config *cfg, char *err, size_t errlen)
{
	if (cfg->rto_min_ns > cfg->rto_max_ns) {
		set_err(err, errlen, "rto_min = %gms is larger than rto_max = %gms", (double)cfg->rto_min_ns / 1e6,
			(double)cfg->rto_max_ns / 1e6);
		return -1;
	}
	if (cfg->flow_cache_bytes > cfg->total_cache_bytes) {
		set_err(err, errlen, "flow_cache_bytes = %llu is larger than total_cache_bytes = %llu",
			(unsigned long long)cfg->flow_cache_bytes, (unsigned long long)cfg->total_cache_bytes);
		return -1;
	}
	if (cfg->nwireless == 0) {
		set_err(err, errlen, "wireless = : missing: name the wireless interface(s), e.g. wireless = wlan0");
		return -1;
	}
	return 0;
}

static const char *type_name(enum key_type t)
{
	switch (t) {
	case K_UINT:
		return "integer";
	case K_BOOL:
		return "bool";
	case K_DURATION:
		return "duration";
	case K_SIZE:
		return "size";
	case K_FRACTION:
		return "fraction";
	case K_ENUM:
		return "choice";
	case K_STRING:
		return "path";
	case K_IFACES:
		return "interfaces";
	case K_COPIES:
		return "0..3|auto";
	}
	return "?";
}

void config_print_keys(FILE *out)
{
	size_t i;

	for (i = 0; i < NKEYS; i++) {
		const struct key_def *k = &keys[i];
		char flag[64];
		size_t j;

		snprintf(flag, sizeof(flag), "--%s", k->name);
		for (j = 2; flag[j]; j++)
			if (flag[j] == '_')
				flag[j] = '-';
		fprintf(out, "  %-26s %-10s default %s\n      %s\n", flag, type_name(k->type),
			*k->def ? k->def : "(none)", k->help);
	}
}

static void print_value(const struct pep_config *cfg, const struct key_def *k, FILE *out)
{
	const char *field = (const char *)cfg + k->offset;
	uint64_t v = 0;
	uint32_t i;

	if (k->size == sizeof(uint64_t))
		memcpy(&v, field, sizeof(v));
	else if (k->size == sizeof(uint32_t))
		v = *(const uint32_t *)field;
	switch (k->type) {
	case K_UINT:
	case K_SIZE:
		fprintf(out, "%llu", (unsigned long long)v);
		break;
	case K_DURATION:
		fprintf(out, "%gms", (double)v / 1e6);
		break;
	case K_BOOL:
		fprintf(out, "%s", *(const bool *)field ? "true" : "false");
		break;
	case K_FRACTION:
		fprintf(out, "%g", *(const double *)field);
		break;
	case K_ENUM:
		fprintf(out, "%s", k->names[*(const int *)field]);
		break;
	case K_STRING:
		fprintf(out, "%s", field);
		break;
	case K_IFACES:
		for (i = 0; i < cfg->nwireless; i++)
			fprintf(out, "%s%s", i ? "," : "", cfg->wireless[i]);
		break;
	case K_COPIES:
		if (*(const int *)field == COPIES_AUTO)
			fprintf(out, "auto");
		else
			fprintf(out, "%d", *(const int *)field);
		break;
	}
}

void config_dump(const struct pep_config *cfg, FILE *out)
{
	size_t i;

	for (i = 0; i < NKEYS; i++) {
		fprintf(out, "%s = ", keys[i].name);
		print_value(cfg, &keys[i], out);
		fputc('\n', out);
	}
}

const char *config_filter_name(enum pep_filter_kind kind)
{
	return (unsigned int)kind < 4 ? filter_names[kind] : "?";
}

const char *config_rules_name(enum pep_rules_backend backend)
{
	return (unsigned int)backend < 5 ? rules_names[backend] : "?";
}
