// SPDX-License-Identifier: GPL-2.0-only
/*
 * pepd: a TCP performance-enhancing proxy for the base station of a
 * wireless link, on NFQUEUE.  See Documentation/pepd.rst.
 */
#include <net/if.h>
#include <stdio.h>

#include "cli.h"
#include "ctl.h"
#include "daemon.h"
#include "rules.h"

static int cmd_run(const struct cli_program *p, void *cfg, const struct cli_args *args)
{
	static struct pepd d;	/* large (packet buffers): not on the stack */
	char err[PEP_ERR_MAX];
	int ret;

	(void)p;
	(void)args;
	if (pepd_start(&d, cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "pepd: %s\n", err);
		pepd_stop(&d);
		return 1;
	}
	ret = pepd_run(&d);
	pepd_stop(&d);
	fprintf(stderr, "pepd: stopped\n");
	return ret == 0 ? 0 : 1;
}

static int cmd_stats(const struct cli_program *p, void *cfg, const struct cli_args *args)
{
	char path[PEP_PATH_MAX], req[64], err[PEP_ERR_MAX];

	(void)p;
	pepd_ctl_path(cfg, path, sizeof(path));
	snprintf(req, sizeof(req), "stats%s %u", args->json ? " json" : "", args->list_limit);
	if (ctl_request(path, req, stdout, "is pepd running with this queue / control_socket?", err, sizeof(err)) < 0) {
		fprintf(stderr, "pepd stats: %s\n", err);
		return 1;
	}
	return 0;
}

static int cmd_cleanup(const struct cli_program *p, void *cfg, const struct cli_args *args)
{
	const struct pep_config *c = cfg;
	uint32_t portid = 0;

	(void)p;
	(void)args;
	/* a running pepd's rules are its own: removing them would silently switch it off */
	if (rules_queue_bound(c->queue, &portid) > 0) {
		fprintf(stderr, "pepd cleanup: queue = %u: a program is bound to it (netlink port %u): a running pepd "
			"removes its own rules when it stops\n", c->queue, portid);
		return 1;
	}
	rules_remove_all(cfg);	/* needs only queue and rules */
	return 0;
}

static int check(void *cfg, char *err, size_t errlen)
{
	return config_check(cfg, err, errlen);
}

/*
 * `pepd check` also asks this host: every wireless interface exists, in
 * the network namespace check runs in (run it where pepd will run).  pepd
 * itself starts without them and watches for them (hotplug), so only check
 * refuses a name that is not there.
 */
static int cmd_check(const struct cli_program *p, void *cfg, const struct cli_args *args)
{
	const struct pep_config *c = cfg;
	uint32_t i;

	for (i = 0; i < c->nwireless; i++) {
		if (!if_nametoindex(c->wireless[i])) {
			fprintf(stderr, "pepd: wireless = %s: no such interface in this network namespace\n",
				c->wireless[i]);
			return 2;
		}
	}
	return cli_print_config(p, cfg, args);
}

static const struct cli_command commands[] = {
	{ .name = "run", .synopsis = "[-c FILE] [--KEY VALUE ...]", .summary = "run the daemon (in the foreground)",
	  .checked = true, .run = cmd_run },
	{ .name = "stats", .synopsis = "[--json] [--flows N] [-c FILE] [--queue N | --control-socket PATH]",
	  .summary = "print a running pepd's statistics", .run = cmd_stats },
	{ .name = "cleanup", .synopsis = "[-c FILE] [--KEY VALUE ...]",
	  .summary = "remove the queue rules a killed pepd of this queue left (refused while one runs)",
	  .run = cmd_cleanup },
	{ .name = "check", .synopsis = "[-c FILE] [--KEY VALUE ...]",
	  .summary = "validate the configuration (interfaces included) and print it", .checked = true,
	  .run = cmd_check },
	{ .name = "schema", .synopsis = "[--json]",
	  .summary = "print every key: type, default, range, unit, meaning", .run = cli_print_schema },
	{ .name = NULL },
};

static const struct cli_program pepd_program = {
	.schema = &pepd_schema,
	.commands = commands,
	.check = check,
	.flag_example = "--rto-min 30ms is rto_min = 30ms",
	.list_flag = "--flows",
	.example_file = "pepd.conf.example",
	.design_doc = "Documentation/pepd.rst",
};

int main(int argc, char **argv)
{
	struct pep_config cfg;

	return cli_main(&pepd_program, &cfg, argc, argv);
}
