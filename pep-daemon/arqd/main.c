// SPDX-License-Identifier: GPL-2.0-only
/*
 * arqd: a TCP-unaware link-layer ARQ for one end of a wireless link (run
 * one at each end).  See Documentation/arq.rst.
 */
#include <net/if.h>
#include <stdio.h>

#include "arqd.h"
#include "cli.h"
#include "ctl.h"

static int cmd_run(const struct cli_program *p, void *cfg, const struct cli_args *args)
{
	static struct arqd d;	/* large (frame buffers): not on the stack */
	char err[CFG_ERR_MAX];
	int ret;

	(void)p;
	(void)args;
	if (arqd_start(&d, cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "arqd: %s\n", err);
		arqd_stop(&d);
		return 1;
	}
	ret = arqd_run(&d);
	arqd_stop(&d);
	fprintf(stderr, "arqd: stopped\n");
	return ret == 0 ? 0 : 1;
}

static int cmd_stats(const struct cli_program *p, void *cfg, const struct cli_args *args)
{
	const struct arq_config *c = cfg;
	char err[CFG_ERR_MAX], path[CFG_PATH_MAX];

	(void)p;
	if (!c->link[0] && !c->control_socket[0]) {
		fprintf(stderr, "arqd stats: name the daemon: --link IFACE or --control-socket PATH\n");
		return 2;
	}
	arq_ctl_path(c, path, sizeof(path));
	if (ctl_request(path, args->json ? "stats json" : "stats", stdout,
			"is arqd running on this link / control_socket?", err, sizeof(err)) < 0) {
		fprintf(stderr, "arqd stats: %s\n", err);
		return 1;
	}
	return 0;
}

static int check(void *cfg, char *err, size_t errlen)
{
	return arq_config_check(cfg, err, errlen);
}

/* `arqd check` also asks this host: the link exists in the network namespace check runs in. */
static int cmd_check(const struct cli_program *p, void *cfg, const struct cli_args *args)
{
	const struct arq_config *c = cfg;

	if (!if_nametoindex(c->link)) {
		fprintf(stderr, "arqd: link = %s: no such interface in this network namespace\n", c->link);
		return 2;
	}
	return cli_print_config(p, cfg, args);
}

static const struct cli_command commands[] = {
	{ .name = "run", .synopsis = "[-c FILE] [--KEY VALUE ...]", .summary = "run the daemon (in the foreground)",
	  .checked = true, .run = cmd_run },
	{ .name = "stats", .synopsis = "[--json] [-c FILE] [--link IFACE | --control-socket PATH]",
	  .summary = "print a running arqd's statistics", .run = cmd_stats },
	{ .name = "check", .synopsis = "[-c FILE] [--KEY VALUE ...]",
	  .summary = "validate the configuration (the link included) and print it", .checked = true,
	  .run = cmd_check },
	{ .name = "schema", .synopsis = "[--json]",
	  .summary = "print every key: type, default, range, unit, meaning", .run = cli_print_schema },
	{ .name = NULL },
};

static const struct cli_program arqd_program = {
	.schema = &arqd_schema,
	.commands = commands,
	.check = check,
	.flag_example = "--max-rtx 3 is max_rtx = 3",
	.example_file = "arqd.conf.example",
	.design_doc = "Documentation/arq.rst",
};

int main(int argc, char **argv)
{
	struct arq_config cfg;

	return cli_main(&arqd_program, &cfg, argc, argv);
}
