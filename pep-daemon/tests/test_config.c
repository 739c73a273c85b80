// SPDX-License-Identifier: GPL-2.0-only
/* Configuration: values, units, and one-line errors that name the key and the value. */
#include "tcase.h"

static void good_values(void)
{
	static const char text[] =
		"# a comment\n"
		"filter = snoop+   # trailing comment\n"
		"wireless = wlan0, wlan1\n"
		"rto_min = 30ms\n"
		"idle_timeout = 2s\n"
		"flow_cache_bytes = 96KiB\n"
		"total_cache_bytes = 8M\n"
		"copies = auto\n"
		"adaptive_target = 0.5%\n"
		"mark = 0x4000\n"
		"\n"
		"hide-sack = on\n"
		"drop_dupacks = true\n";
	struct pep_config c;
	char err[PEP_ERR_MAX] = "";

	config_defaults(&c);
	CHECK(c.filter == FILTER_SNOOP && c.rtx_thresh == 2 && c.copies == 2 && c.rto_min_ns == 20000000ULL,
	      "defaults");
	CHECK(c.drop_dupacks == DROP_DUPACKS_AUTO && !c.hide_sack, "repairs hidden from flows without SACK only");
	CHECK(config_load_text(&c, text, sizeof(text) - 1, "t.conf", err, sizeof(err)) == 0, "loads: %s", err);
	CHECK(c.filter == FILTER_SNOOPPLUS, "filter");
	CHECK(c.nwireless == 2 && strcmp(c.wireless[1], "wlan1") == 0, "interfaces");
	CHECK(c.rto_min_ns == 30000000ULL && c.idle_timeout_ns == 2000000000ULL, "durations");
	CHECK(c.flow_cache_bytes == 96 * 1024 && c.total_cache_bytes == 8 << 20, "sizes");
	CHECK(c.copies == COPIES_AUTO && c.adaptive_target > 0.00499 && c.adaptive_target < 0.00501, "copies, %%");
	CHECK(c.mark == 0x4000 && c.hide_sack && c.drop_dupacks == DROP_DUPACKS_TRUE, "hex, dashes, choices");
	CHECK(config_check(&c, err, sizeof(err)) == 0, "consistent: %s", err);
}

#define LZ "a leading zero (octal to C, decimal to people): write it in decimal, or in hex with 0x"

struct bad {
	const char *key, *value, *want;
};

static const struct bad bads[] = {
	{ "rto_min", "30", "where: rto_min = 30: expected a duration with a unit (us, ms, s)" },
	{ "rto_min", "0.5ms", "where: rto_min = 0.5ms: must lie between 1ms and 60000ms" },
	{ "copies", "4", "where: copies = 4: expected 0, 1, 2, 3 or auto" },
	{ "filter", "snooop", "where: filter = snooop: expected one of passthrough, snoop, snoop+ or pc" },
	{ "rtx_thresh", "0", "where: rtx_thresh = 0: must lie between 1 and 16" },
	{ "rtx_thresh", "two", "where: rtx_thresh = two: expected a whole number" },
	{ "use_sack", "maybe", "where: use_sack = maybe: expected true or false" },
	{ "flow_cache_bytes", "64kb", "where: flow_cache_bytes = 64kb: expected a size in bytes (suffix k, M, G or "
				      "KiB, MiB, GiB)" },
	{ "adaptive_target", "1.5", "where: adaptive_target = 1.5: must lie strictly between 0 and 1" },
	{ "wireless", "wlan0;rm", "where: wireless = wlan0;rm: not an interface name" },
	{ "no_such_key", "1", "where: no_such_key = 1: unknown key (pepd --help lists them)" },
	{ "dupack_thresh", "2", "where: dupack_thresh = 2: must lie between 3 and 64" },
	{ "queues", "0", "where: queues = 0: expected a whole number from 1 to 64, or auto" },
	{ "queues", "65", "where: queues = 65: expected a whole number from 1 to 64, or auto" },
	{ "queues", "many", "where: queues = many: expected a whole number from 1 to 64, or auto" },
	{ "verdict_batch", "0", "where: verdict_batch = 0: must lie between 1 and 1024" },
	{ "busy_poll", "2ms", "where: busy_poll = 2ms: must lie between 0ms and 1ms" },
	{ "busy_poll", "50", "where: busy_poll = 50: expected a duration with a unit (us, ms, s)" },
	{ "headers_only", "some", "where: headers_only = some: expected true or false" },
	/* numbers are decimal (or 0x hex), never octal: a leading zero is refused, naming the value */
	{ "queue", "010", "where: queue = 010: " LZ },
	{ "mark", "0100", "where: mark = 0100: " LZ },
	{ "queue", "08", "where: queue = 08: " LZ },
	{ "flow_cache_bytes", "064KiB", "where: flow_cache_bytes = 064KiB: " LZ },
	{ "rto_min", "010ms", "where: rto_min = 010ms: " LZ },
	{ "adaptive_target", "00.5", "where: adaptive_target = 00.5: " LZ },
	{ "copies", "02", "where: copies = 02: " LZ },
	{ "queue", "0x", "where: queue = 0x: expected a whole number" },
	{ "rto_min", "0x10ms", "where: rto_min = 0x10ms: expected a duration with a unit (us, ms, s)" },
	{ "rto_min", "-5ms", "where: rto_min = -5ms: expected a duration with a unit (us, ms, s)" },
	{ "adaptive_target", "0x0.1", "where: adaptive_target = 0x0.1: expected a fraction like 0.01 or 1%" },
	{ "adaptive_target", " 0.5", "where: adaptive_target =  0.5: expected a fraction like 0.01 or 1%" },
	{ "adaptive_target", "-0.5", "where: adaptive_target = -0.5: expected a fraction like 0.01 or 1%" },
};

static void bad_values(void)
{
	size_t i;

	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct pep_config c;
		char err[PEP_ERR_MAX] = "";

		config_defaults(&c);
		CHECK(config_set(&c, bads[i].key, bads[i].value, "where", err, sizeof(err)) < 0, "%s = %s refused",
		      bads[i].key, bads[i].value);
		CHECK(strcmp(err, bads[i].want) == 0, "message\n  got:  %s\n  want: %s", err, bads[i].want);
		CHECK(!strchr(err, '\n'), "one line");
	}
}

/* What numbers are: decimal, 0x hex for whole numbers; 0 itself, fractions and exponents of decimals. */
static void numbers(void)
{
	static const struct {
		const char *key, *value;
		uint64_t want;
	} cases[] = {
		{ "queue", "10", 10 },
		{ "queue", "0", 0 },
		{ "mark", "0x10", 16 },
		{ "mark", "0X1f", 31 },
		{ "flow_cache_bytes", "0x10k", 16 * 1024 },
		{ "rto_min", "1e1ms", 10000000 },
		{ "rto_min", "0.5s", 500000000 },
		{ "rto_min", ".5s", 500000000 },
		{ "aqm_target", "0ms", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pep_config c;
		char err[PEP_ERR_MAX] = "";
		uint64_t got = 0;

		config_defaults(&c);
		CHECK(config_set(&c, cases[i].key, cases[i].value, "where", err, sizeof(err)) == 0, "%s = %s: %s",
		      cases[i].key, cases[i].value, err);
		if (strcmp(cases[i].key, "queue") == 0)
			got = c.queue;
		else if (strcmp(cases[i].key, "mark") == 0)
			got = c.mark;
		else if (strcmp(cases[i].key, "flow_cache_bytes") == 0)
			got = c.flow_cache_bytes;
		else if (strcmp(cases[i].key, "rto_min") == 0)
			got = c.rto_min_ns;
		else if (strcmp(cases[i].key, "aqm_target") == 0)
			got = c.aqm_target_ns;
		CHECK(got == cases[i].want, "%s = %s: %llu, want %llu", cases[i].key, cases[i].value,
		      (unsigned long long)got, (unsigned long long)cases[i].want);
	}
}

static void file_errors(void)
{
	struct pep_config c;
	char err[PEP_ERR_MAX] = "";
	static const char no_eq[] = "filter snoop\n", bad_line3[] = "\n# x\nqueue = 70000\n";

	config_defaults(&c);
	CHECK(config_load_text(&c, no_eq, sizeof(no_eq) - 1, "a.conf", err, sizeof(err)) < 0 &&
		      strcmp(err, "a.conf:1: filter snoop: expected key = value") == 0,
	      "%s", err);
	CHECK(config_load_text(&c, bad_line3, sizeof(bad_line3) - 1, "b.conf", err, sizeof(err)) < 0 &&
		      strcmp(err, "b.conf:3: queue = 70000: must lie between 0 and 65535") == 0,
	      "%s", err);
	config_defaults(&c);
	CHECK(config_check(&c, err, sizeof(err)) < 0 && strstr(err, "wireless"), "wireless is required: %s", err);
	config_set(&c, "wireless", "wlan0", "x", err, sizeof(err));
	config_set(&c, "rto_min", "2s", "x", err, sizeof(err));
	CHECK(config_check(&c, err, sizeof(err)) < 0 && strstr(err, "rto_min = 2000ms is larger than rto_max"),
	      "%s", err);
	/* several queues: numbers from queue on, each with its part of the caches */
	config_set(&c, "rto_min", "20ms", "x", err, sizeof(err));
	config_set(&c, "queue", "65534", "x", err, sizeof(err));
	config_set(&c, "queues", "3", "x", err, sizeof(err));
	CHECK(config_check(&c, err, sizeof(err)) < 0 &&
		      strcmp(err, "queue = 65534 with queues = 3: the last queue would be 65536, past 65535") == 0,
	      "%s", err);
	config_set(&c, "queue", "0", "x", err, sizeof(err));
	config_set(&c, "total_cache_bytes", "600KiB", "x", err, sizeof(err));
	CHECK(config_check(&c, err, sizeof(err)) < 0 &&
		      strstr(err, "flow_cache_bytes = 262144 is larger than total_cache_bytes = 614400 divided among queues = 3"),
	      "%s", err);
	config_set(&c, "queues", "2", "x", err, sizeof(err));
	CHECK(config_check(&c, err, sizeof(err)) == 0 && config_queue_count(&c) == 2, "two fit: %s", err);
	/* the bypass mark must not read as pepd's own */
	config_set(&c, "bypass_mark", "0x30000", "x", err, sizeof(err));
	CHECK(config_check(&c, err, sizeof(err)) < 0 &&
		      strcmp(err, "bypass_mark = 0x30000 shares bits with mark = 0x10000") == 0, "%s", err);
	config_set(&c, "bypass_mark", "0", "x", err, sizeof(err));
	CHECK(config_check(&c, err, sizeof(err)) == 0, "bypass off: %s", err);
	config_set(&c, "queues", "auto", "x", err, sizeof(err));
	CHECK(config_queue_count(&c) >= 1 && config_queue_count(&c) <= PEP_MAX_QUEUES, "auto: the CPUs");
}

/* Every key the table knows has a round trip through dump and load. */
static void round_trip(void)
{
	struct pep_config a, b;
	char err[PEP_ERR_MAX] = "", *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	config_defaults(&a);
	config_set(&a, "wireless", "wlan0,wlan1", "x", err, sizeof(err));
	config_set(&a, "copies", "auto", "x", err, sizeof(err));
	config_dump(&a, f);
	fclose(f);
	config_defaults(&b);
	CHECK(config_load_text(&b, text, len, "dump", err, sizeof(err)) == 0, "the dump loads: %s", err);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0 || (a.copies == b.copies && a.nwireless == b.nwireless &&
						    a.rto_min_ns == b.rto_min_ns),
	      "round trip");
	free(text);
}

int main(void)
{
	good_values();
	bad_values();
	numbers();
	file_errors();
	round_trip();
	return tc_report("test_config");
}
