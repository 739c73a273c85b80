/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A daemon's command line: "PROG [COMMAND] [-c FILE] [--KEY VALUE ...]".
 * One table of subcommands drives both the dispatch and the usage text,
 * and the configuration schema (cfgparse.h) the flags, so --help can never
 * disagree with what the program does.
 */
#ifndef AIRTCP_CLI_H
#define AIRTCP_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cfgparse.h"

/* What the command line said besides configuration keys. */
struct cli_args {
	const char *command;
	bool json;		/* --json */
	uint32_t list_limit;	/* the program's list_flag N (e.g. pepd stats --flows N) */
};

struct cli_program;

struct cli_command {
	const char *name;
	const char *synopsis;	/* the arguments, for the usage text */
	const char *summary;	/* what it does, one line */
	bool checked;		/* the configuration must pass the program's cross-key check first */
	int (*run)(const struct cli_program *p, void *cfg, const struct cli_args *args);
};

struct cli_program {
	const struct cfg_schema *schema;
	const struct cli_command *commands;	/* ends with a NULL name; the first is the default */
	/* required keys and cross-key checks, after every value is set; -1 and one line in err */
	int (*check)(void *cfg, char *err, size_t errlen);
	const char *flag_example;	/* "--rto-min 30ms is rto_min = 30ms" */
	const char *list_flag;		/* e.g. "--flows", or NULL */
	const char *example_file;	/* "pepd.conf.example" */
	const char *design_doc;		/* "Documentation/pepd.rst" */
};

/*
 * Defaults, then the command, then -c FILE, then every flag (flags win
 * whatever their order), then the command's check, then its run; returns
 * the exit status (2 for a usage or configuration error).  --help and
 * --version print and return 0.
 */
int cli_main(const struct cli_program *p, void *cfg, int argc, char **argv);

void cli_usage(const struct cli_program *p, FILE *out);

/* Commands every daemon has: print the effective configuration; print the schema (--json: machine-readable). */
int cli_print_config(const struct cli_program *p, void *cfg, const struct cli_args *args);
int cli_print_schema(const struct cli_program *p, void *cfg, const struct cli_args *args);

#endif
