// SPDX-License-Identifier: GPL-2.0-only
/*
 * arqd: a TCP-unaware link-layer ARQ for one end of a wireless link (run
 * one at each end).  See Documentation/arq.rst.
 */
#include <stdio.h>
#include <string.h>

#include "arqd.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: arqd [run] [-c FILE] [--KEY VALUE ...]   run the daemon (in the foreground)\n"
		"       arqd stats [--json] [-c FILE] [--link IFACE | --control-socket PATH]\n"
		"                                                print a running arqd's statistics\n"
		"       arqd check [-c FILE] [--KEY VALUE ...]    validate the configuration and print it\n"
		"       arqd --help | --version\n"
		"\n"
		"Every configuration key is also a flag: --max-rtx 3 is max_rtx = 3 in the file.\n"
		"Flags override the file (-c FILE), which overrides the defaults.  Keys:\n\n");
	cfg_print_keys(&arqd_schema, out);
	fprintf(out, "\nAn annotated example: arqd.conf.example; the design: Documentation/arq.rst.\n");
}

static int cmd_run(const struct arq_config *cfg)
{
	static struct arqd d;	/* large (frame buffers): not on the stack */
	char err[CFG_ERR_MAX];
	int ret;

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

int main(int argc, char **argv)
{
	struct arq_config cfg;
	struct cfg_cli cli;
	char err[CFG_ERR_MAX], path[CFG_PATH_MAX];

	cfg_defaults(&arqd_schema, &cfg);
	if (cfg_parse_args(&arqd_schema, &cfg, argc, argv, &cli, usage, "0.1.0") < 0)
		return 2;
	if (strcmp(cli.command, "stats") == 0) {
		if (!cfg.link[0] && !cfg.control_socket[0]) {
			fprintf(stderr, "arqd stats: name the daemon: --link IFACE or --control-socket PATH\n");
			return 2;
		}
		arq_ctl_path(&cfg, path, sizeof(path));
		if (ctl_request(path, cli.json ? "stats json" : "stats", stdout,
				"is arqd running on this link / control_socket?", err, sizeof(err)) < 0) {
			fprintf(stderr, "arqd stats: %s\n", err);
			return 1;
		}
		return 0;
	}
	if (arq_config_check(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "arqd: %s\n", err);
		return 2;
	}
	if (strcmp(cli.command, "run") == 0)
		return cmd_run(&cfg);
	if (strcmp(cli.command, "check") == 0) {
		cfg_dump(&arqd_schema, &cfg, stdout);
		return 0;
	}
	fprintf(stderr, "arqd: %s: unknown command (arqd --help)\n", cli.command);
	return 2;
}
