// SPDX-License-Identifier: GPL-2.0
/*
 * airtcp-timeloss: load, attach, inspect and detach the time-driven loss
 * channel (timeloss.bpf.o) on a device's tc egress or ingress hook, in the
 * network namespace the command runs in.
 *
 *   airtcp-timeloss attach --dev DEV --good-mean T --bad-mean T
 *                   [--holding exponential|deterministic] [--loss-good P]
 *                   [--loss-bad P] [--seed N] [--first-good T]
 *                   [--start-at NS] [--hook egress|ingress] [--offset T]
 *                   [--obj FILE]
 *   airtcp-timeloss stats --dev DEV [--hook egress|ingress]
 *   airtcp-timeloss detach --dev DEV [--hook egress|ingress]
 *
 * --offset: the state applied to a packet is the channel's at its arrival
 * at the hook minus this (at a receiver's ingress: the link's one-way
 * delay, so the state is the one while the packet was on the air).
 *
 * Times take a unit (us, ms, s); probabilities are in [0, 1].  The filter
 * stays attached after this program exits and goes away with the device
 * (or its namespace).  Output is one line of JSON.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "timeloss.h"

#define TL_HANDLE 0x7417
#define TL_PRIORITY 1

struct options {
	const char *dev;
	const char *obj;
	double good_mean_s, bad_mean_s, first_good_s;
	double loss_good, loss_bad;
	int deterministic;
	unsigned long long seed;
	unsigned long long start_ns;
	double offset_s;
	enum bpf_tc_attach_point hook;
};

static void die(const char *what, const char *value, const char *problem)
{
	fprintf(stderr, "airtcp-timeloss: %s = '%s': %s\n", what, value, problem);
	exit(2);
}

static double parse_time(const char *opt, const char *text)
{
	char *end;
	double value = strtod(text, &end);

	if (end == text || value < 0)
		die(opt, text, "expected a non-negative time with unit us, ms or s");
	if (!strcmp(end, "us"))
		return value * 1e-6;
	if (!strcmp(end, "ms"))
		return value * 1e-3;
	if (!strcmp(end, "s"))
		return value;
	die(opt, text, "missing or unknown unit (us, ms, s)");
	return 0;
}

static double parse_prob(const char *opt, const char *text)
{
	char *end;
	double value = strtod(text, &end);

	if (end == text || *end || value < 0 || value > 1)
		die(opt, text, "expected a probability in [0, 1]");
	return value;
}

static unsigned long long parse_u64(const char *opt, const char *text)
{
	char *end;
	unsigned long long value;

	errno = 0;
	value = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-')
		die(opt, text, "expected a non-negative integer");
	return value;
}

static __u32 q32(double prob)
{
	double scaled = prob * 4294967296.0;

	return scaled >= 4294967295.0 ? 0xffffffffu : (__u32)scaled;
}

static unsigned long long monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* One of two words: 0 for `first`, 1 for `second`. */
static int parse_choice(const char *opt, const char *text, const char *first, const char *second)
{
	char expected[64];

	if (!strcmp(text, first))
		return 0;
	if (!strcmp(text, second))
		return 1;
	snprintf(expected, sizeof(expected), "expected %s or %s", first, second);
	die(opt, text, expected);
	return -1;
}

static void build_config(const struct options *o, struct tl_config *cfg)
{
	int i;

	memset(cfg, 0, sizeof(*cfg));
	cfg->start_ns = o->start_ns;
	cfg->offset_ns = (__u64)llround(o->offset_s * 1e9);
	cfg->mean_ns[TL_GOOD] = (__u64)llround(o->good_mean_s * 1e9);
	cfg->mean_ns[TL_BAD] = (__u64)llround(o->bad_mean_s * 1e9);
	cfg->first_good_ns = (__u64)llround(o->first_good_s * 1e9);
	cfg->seed = o->seed;
	cfg->loss[TL_GOOD] = q32(o->loss_good);
	cfg->loss[TL_BAD] = q32(o->loss_bad);
	cfg->loss_all[TL_GOOD] = o->loss_good >= 1.0;
	cfg->loss_all[TL_BAD] = o->loss_bad >= 1.0;
	cfg->pi_bad = q32(o->bad_mean_s / (o->good_mean_s + o->bad_mean_s));
	cfg->deterministic = o->deterministic;
	/* Midpoint quantiles keep the table's mean within 0.2 % of 1. */
	for (i = 0; i < TL_EXPQ_SIZE; i++)
		cfg->expq[i] = (__u32)llround(-log((i + 0.5) / TL_EXPQ_SIZE) * (1 << TL_Q16));
}

/* The object is installed next to this program. */
static const char *default_object(void)
{
	static const char name[] = "timeloss.bpf.o";
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - sizeof(name) - 1);
	char *slash;

	if (n < 0)
		return name;
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (!slash)
		return name;
	strcpy(slash + 1, name);
	return path;
}

static int hook_for(const struct options *o, struct bpf_tc_hook *hook)
{
	int ifindex = if_nametoindex(o->dev);

	if (!ifindex)
		die("--dev", o->dev, "no such interface in this network namespace");
	memset(hook, 0, sizeof(*hook));
	hook->sz = sizeof(*hook);
	hook->ifindex = ifindex;
	hook->attach_point = o->hook;
	return ifindex;
}

static int cmd_attach(const struct options *o)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = TL_HANDLE, .priority = TL_PRIORITY,
			    .flags = BPF_TC_F_REPLACE);
	struct bpf_tc_hook hook;
	struct tl_config *cfg;
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_map *map, *cfg_map = NULL;
	libbpf_print_fn_t previous;
	int ifindex, err;

	ifindex = hook_for(o, &hook);
	obj = bpf_object__open_file(o->obj, NULL);
	if (!obj)
		die("--obj", o->obj, "cannot open the BPF object");
	bpf_object__for_each_map(map, obj) {
		if (strstr(bpf_map__name(map), "rodata") &&
		    bpf_map__value_size(map) == sizeof(struct tl_config))
			cfg_map = map;
	}
	if (!cfg_map)
		die("--obj", o->obj, "no configuration section (wrong object?)");
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return 1;
	build_config(o, cfg);
	err = bpf_map__set_initial_value(cfg_map, cfg, sizeof(*cfg));
	free(cfg);
	if (err)
		die("--obj", o->obj, "cannot set the configuration");
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "airtcp-timeloss: loading %s failed: %s\n", o->obj, strerror(-err));
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, "timeloss");
	if (!prog)
		die("--obj", o->obj, "no program named timeloss");
	/* An existing clsact is fine; keep libbpf from printing the
	 * kernel's complaint about it.
	 */
	previous = libbpf_set_print(NULL);
	err = bpf_tc_hook_create(&hook);
	libbpf_set_print(previous);
	if (err && err != -EEXIST) {
		fprintf(stderr, "airtcp-timeloss: clsact on %s: %s\n", o->dev, strerror(-err));
		return 1;
	}
	opts.prog_fd = bpf_program__fd(prog);
	err = bpf_tc_attach(&hook, &opts);
	if (err) {
		fprintf(stderr, "airtcp-timeloss: attach to %s: %s\n", o->dev, strerror(-err));
		return 1;
	}
	printf("{\"dev\": \"%s\", \"ifindex\": %d, \"prog_id\": %u, \"start_ns\": %llu, "
	       "\"good_mean_s\": %.9g, \"bad_mean_s\": %.9g, \"deterministic\": %d, \"seed\": %llu, "
	       "\"hook\": \"%s\", \"offset_s\": %.9g}\n",
	       o->dev, ifindex, opts.prog_id, o->start_ns, o->good_mean_s, o->bad_mean_s,
	       o->deterministic, o->seed, o->hook == BPF_TC_INGRESS ? "ingress" : "egress", o->offset_s);
	bpf_object__close(obj);
	return 0;
}

static int find_chan_map(__u32 prog_id)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info), map_ids[8], i, n;
	int prog_fd, map_fd;

	prog_fd = bpf_prog_get_fd_by_id(prog_id);
	if (prog_fd < 0)
		return -1;
	info.nr_map_ids = 8;
	info.map_ids = (__u64)(unsigned long)map_ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len)) {
		close(prog_fd);
		return -1;
	}
	close(prog_fd);
	n = info.nr_map_ids < 8 ? info.nr_map_ids : 8;
	for (i = 0; i < n; i++) {
		struct bpf_map_info map_info = {};
		__u32 map_len = sizeof(map_info);

		map_fd = bpf_map_get_fd_by_id(map_ids[i]);
		if (map_fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(map_fd, &map_info, &map_len) &&
		    !strcmp(map_info.name, "chan_map"))
			return map_fd;
		close(map_fd);
	}
	return -1;
}

static int cmd_stats(const struct options *o)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = TL_HANDLE, .priority = TL_PRIORITY);
	struct bpf_tc_hook hook;
	struct tl_chan chan;
	__u32 key = 0;
	int map_fd;

	hook_for(o, &hook);
	if (bpf_tc_query(&hook, &opts)) {
		fprintf(stderr, "airtcp-timeloss: no timeloss channel on %s\n", o->dev);
		return 1;
	}
	map_fd = find_chan_map(opts.prog_id);
	if (map_fd < 0 || bpf_map_lookup_elem(map_fd, &key, &chan)) {
		fprintf(stderr, "airtcp-timeloss: cannot read the channel state of %s\n", o->dev);
		return 1;
	}
	close(map_fd);
	printf("{\"dev\": \"%s\", \"prog_id\": %u, \"packets_good\": %llu, \"packets_bad\": %llu, "
	       "\"dropped_good\": %llu, \"dropped_bad\": %llu, \"switches\": %llu, \"resyncs\": %llu, "
	       "\"bad_now\": %u}\n",
	       o->dev, opts.prog_id, (unsigned long long)chan.packets[TL_GOOD],
	       (unsigned long long)chan.packets[TL_BAD], (unsigned long long)chan.dropped[TL_GOOD],
	       (unsigned long long)chan.dropped[TL_BAD], (unsigned long long)chan.switches,
	       (unsigned long long)chan.resyncs, chan.bad);
	return 0;
}

static int cmd_detach(const struct options *o)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = TL_HANDLE, .priority = TL_PRIORITY);
	struct bpf_tc_hook hook;
	int err;

	hook_for(o, &hook);
	err = bpf_tc_detach(&hook, &opts);
	if (err) {
		fprintf(stderr, "airtcp-timeloss: detach from %s: %s\n", o->dev, strerror(-err));
		return 1;
	}
	return 0;
}

static void usage(FILE *out)
{
	fputs("usage: airtcp-timeloss attach --dev DEV --good-mean T --bad-mean T\n"
	      "                       [--holding exponential|deterministic] [--loss-good P]\n"
	      "                       [--loss-bad P] [--seed N] [--first-good T]\n"
	      "                       [--start-at MONOTONIC_NS] [--hook egress|ingress]\n"
	      "                       [--offset T] [--obj FILE]\n"
	      "       airtcp-timeloss stats --dev DEV [--hook egress|ingress]\n"
	      "       airtcp-timeloss detach --dev DEV [--hook egress|ingress]\n"
	      "Times need a unit (us, ms, s); probabilities are in [0, 1].\n",
	      out);
}

int main(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "good-mean", required_argument, NULL, 'g' },
		{ "bad-mean", required_argument, NULL, 'b' },
		{ "holding", required_argument, NULL, 'H' },
		{ "loss-good", required_argument, NULL, 'G' },
		{ "loss-bad", required_argument, NULL, 'B' },
		{ "seed", required_argument, NULL, 's' },
		{ "first-good", required_argument, NULL, 'f' },
		{ "start-at", required_argument, NULL, 't' },
		{ "obj", required_argument, NULL, 'o' },
		{ "hook", required_argument, NULL, 'k' },
		{ "offset", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct options o = { .loss_bad = 1.0, .seed = 1, .first_good_s = -1, .hook = BPF_TC_EGRESS };
	const char *command;
	int c, have_good = 0, have_bad = 0;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	command = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
		switch (c) {
		case 'd':
			o.dev = optarg;
			break;
		case 'g':
			o.good_mean_s = parse_time("--good-mean", optarg);
			have_good = 1;
			break;
		case 'b':
			o.bad_mean_s = parse_time("--bad-mean", optarg);
			have_bad = 1;
			break;
		case 'H':
			o.deterministic = parse_choice("--holding", optarg, "exponential", "deterministic");
			break;
		case 'G':
			o.loss_good = parse_prob("--loss-good", optarg);
			break;
		case 'B':
			o.loss_bad = parse_prob("--loss-bad", optarg);
			break;
		case 's':
			o.seed = parse_u64("--seed", optarg);
			break;
		case 'f':
			o.first_good_s = parse_time("--first-good", optarg);
			break;
		case 't':
			o.start_ns = parse_u64("--start-at", optarg);
			break;
		case 'o':
			o.obj = optarg;
			break;
		case 'k':
			o.hook = parse_choice("--hook", optarg, "egress", "ingress") ? BPF_TC_INGRESS : BPF_TC_EGRESS;
			break;
		case 'O':
			o.offset_s = parse_time("--offset", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc)
		die("argument", argv[optind], "unexpected");
	if (!o.dev)
		die("--dev", "", "required");
	if (!strcmp(command, "stats"))
		return cmd_stats(&o);
	if (!strcmp(command, "detach"))
		return cmd_detach(&o);
	if (strcmp(command, "attach"))
		die("command", command, "expected attach, stats or detach");
	if (!have_good || !have_bad)
		die(have_good ? "--bad-mean" : "--good-mean", "", "required for attach");
	if (o.good_mean_s <= 0 || o.bad_mean_s <= 0)
		die("--good-mean/--bad-mean", "0", "holding times must be positive");
	if (o.first_good_s < 0)
		o.first_good_s = o.good_mean_s;
	if (!o.start_ns)
		o.start_ns = monotonic_ns();
	if (!o.obj)
		o.obj = default_object();
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	return cmd_attach(&o);
}
