// SPDX-License-Identifier: GPL-2.0-only
/*
 * pepd: a TCP performance-enhancing proxy for the base station of a
 * wireless link, on NFQUEUE.  See Documentation/pepd.rst.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "daemon.h"
#include "rules.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: pepd [run] [-c FILE] [--KEY VALUE ...]   run the daemon (in the foreground)\n"
		"       pepd stats [--json] [--flows N] [-c FILE] [--queue N | --control-socket PATH]\n"
		"                                                print a running pepd's statistics\n"
		"       pepd cleanup [-c FILE] [--KEY VALUE ...]  remove queue rules a killed pepd left\n"
		"       pepd check [-c FILE] [--KEY VALUE ...]    validate the configuration and print it\n"
		"       pepd --help | --version\n"
		"\n"
		"Every configuration key is also a flag: --rto-min 30ms is rto_min = 30ms in the file.\n"
		"Flags override the file (-c FILE), which overrides the defaults.  Keys:\n\n");
	config_print_keys(out);
	fprintf(out, "\nAn annotated example: pepd.conf.example; the design: Documentation/pepd.rst.\n");
}

static int cmd_stats(const struct pep_config *cfg, const struct cfg_cli *cli)
{
	char path[PEP_PATH_MAX], req[64], err[PEP_ERR_MAX];

	pepd_ctl_path(cfg, path, sizeof(path));
	snprintf(req, sizeof(req), "stats%s %lu", cli->json ? " json" : "", cli->flows);
	if (ctl_request(path, req, stdout, "is pepd running with this queue / control_socket?", err, sizeof(err)) < 0) {
		fprintf(stderr, "pepd stats: %s\n", err);
		return 1;
	}
	return 0;
}

static int cmd_run(const struct pep_config *cfg)
{
	static struct pepd d;	/* large (packet buffers): not on the stack */
	char err[PEP_ERR_MAX];
	int ret;

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

int main(int argc, char **argv)
{
	struct pep_config cfg;
	struct cfg_cli cli;
	char err[PEP_ERR_MAX];

	config_defaults(&cfg);
	if (cfg_parse_args(&pepd_schema, &cfg, argc, argv, &cli, usage, "0.1.0") < 0)
		return 2;
	if (strcmp(cli.command, "stats") == 0)
		return cmd_stats(&cfg, &cli);
	if (strcmp(cli.command, "cleanup") == 0) {
		rules_remove_all(&cfg);	/* needs only queue and rules */
		return 0;
	}
	if (config_check(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "pepd: %s\n", err);
		return 2;
	}
	if (strcmp(cli.command, "run") == 0)
		return cmd_run(&cfg);
	if (strcmp(cli.command, "check") == 0) {
		config_dump(&cfg, stdout);
		return 0;
	}
	fprintf(stderr, "pepd: %s: unknown command (pepd --help)\n", cli.command);
	return 2;
}
