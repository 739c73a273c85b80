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

struct cli {
	const char *command;
	bool json;
	unsigned long flows;
};

/* Apply -c first, then every --key value, so flags win whatever their order. */
static int parse_args(int argc, char **argv, struct pep_config *cfg, struct cli *cli)
{
	char err[PEP_ERR_MAX];
	int i, first = 1;

	cli->command = "run";
	cli->json = false;
	cli->flows = 64;
	if (argc > 1 && argv[1][0] != '-') {
		cli->command = argv[1];
		first = 2;
	}
	for (i = first; i < argc; i++) {
		if ((strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0) && i + 1 < argc) {
			if (config_load_file(cfg, argv[i + 1], err, sizeof(err)) < 0) {
				fprintf(stderr, "pepd: %s\n", err);
				return -1;
			}
			i++;
		}
	}
	for (i = first; i < argc; i++) {
		const char *arg = argv[i], *eq, *value;
		char key[64], where[80];

		if (strcmp(arg, "-c") == 0 || strcmp(arg, "--config") == 0) {
			i++;
			continue;
		}
		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			usage(stdout);
			exit(0);
		}
		if (strcmp(arg, "--version") == 0) {
			printf("pepd 0.1.0\n");
			exit(0);
		}
		if (strcmp(arg, "--json") == 0) {
			cli->json = true;
			continue;
		}
		if (strcmp(arg, "--flows") == 0 && i + 1 < argc) {
			cli->flows = strtoul(argv[++i], NULL, 10);
			continue;
		}
		if (strncmp(arg, "--", 2) != 0) {
			fprintf(stderr, "pepd: %s: unexpected argument (pepd --help)\n", arg);
			return -1;
		}
		eq = strchr(arg, '=');
		snprintf(key, sizeof(key), "%.*s", (int)(eq ? (size_t)(eq - arg - 2) : strlen(arg + 2)), arg + 2);
		if (!config_is_key(key)) {
			fprintf(stderr, "pepd: %s: unknown option (pepd --help lists them)\n", arg);
			return -1;
		}
		if (eq) {
			value = eq + 1;
		} else if (i + 1 < argc) {
			value = argv[++i];
		} else {
			fprintf(stderr, "pepd: --%s: missing value\n", key);
			return -1;
		}
		snprintf(where, sizeof(where), "--%s", key);
		if (config_set(cfg, key, value, where, err, sizeof(err)) < 0) {
			fprintf(stderr, "pepd: %s\n", err);
			return -1;
		}
	}
	return 0;
}

static int cmd_stats(const struct pep_config *cfg, const struct cli *cli)
{
	char path[PEP_PATH_MAX], req[64], err[PEP_ERR_MAX];

	pepd_ctl_path(cfg, path, sizeof(path));
	snprintf(req, sizeof(req), "stats%s %lu", cli->json ? " json" : "", cli->flows);
	if (ctl_request(path, req, stdout, err, sizeof(err)) < 0) {
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
	struct cli cli;
	char err[PEP_ERR_MAX];

	config_defaults(&cfg);
	if (parse_args(argc, argv, &cfg, &cli) < 0)
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
