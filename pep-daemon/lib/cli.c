// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ctl.h"
#include "json.h"
#include "version.h"

static const struct cli_command *find_command(const struct cli_program *p, const char *name)
{
	const struct cli_command *c;

	for (c = p->commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

void cli_usage(const struct cli_program *p, FILE *out)
{
	const char *prog = p->schema->prog;
	const struct cli_command *c;

	for (c = p->commands; c->name; c++)
		fprintf(out, "%s %s%s%s%s %s\n        %s\n", c == p->commands ? "usage:" : "      ", prog,
			c == p->commands ? " [" : " ", c->name, c == p->commands ? "]" : "", c->synopsis, c->summary);
	fprintf(out,
		"       %s --help | --version\n"
		"\n"
		"Every configuration key is also a flag: %s in the file.\n"
		"Flags override the file (-c FILE), which overrides the defaults.  Keys:\n\n",
		prog, p->flag_example);
	cfg_print_keys(p->schema, out);
	fprintf(out, "\nAn annotated example: %s; the design: %s.\n", p->example_file, p->design_doc);
}

static bool is_config_flag(const char *arg)
{
	return strcmp(arg, "-c") == 0 || strcmp(arg, "--config") == 0;
}

static int parse_limit(const struct cli_program *p, const char *text, uint32_t *limit)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || end == text || *end || v > UINT32_MAX) {
		fprintf(stderr, "%s: %s %s: expected a whole number\n", p->schema->prog, p->list_flag, text);
		return -1;
	}
	*limit = (uint32_t)v;
	return 0;
}

/* -c first, then every flag, so that flags win whatever their order; -1 after one line on stderr. */
static int parse_flags(const struct cli_program *p, void *cfg, int first, int argc, char **argv,
		       struct cli_args *args, bool *done)
{
	const struct cfg_schema *s = p->schema;
	char err[CFG_ERR_MAX];
	int i;

	for (i = first; i < argc; i++) {
		if (is_config_flag(argv[i]) && i + 1 < argc) {
			if (cfg_load_file(s, cfg, argv[i + 1], err, sizeof(err)) < 0) {
				fprintf(stderr, "%s: %s\n", s->prog, err);
				return -1;
			}
			i++;
		}
	}
	for (i = first; i < argc; i++) {
		const char *arg = argv[i], *eq, *value;
		char key[64], where[80];

		if (is_config_flag(arg)) {
			i++;
			continue;
		}
		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			cli_usage(p, stdout);
			*done = true;
			return 0;
		}
		if (strcmp(arg, "--version") == 0) {
			printf("%s %s\n", s->prog, airtcp_version());
			*done = true;
			return 0;
		}
		if (strcmp(arg, "--json") == 0) {
			args->json = true;
			continue;
		}
		if (p->list_flag && strcmp(arg, p->list_flag) == 0 && i + 1 < argc) {
			if (parse_limit(p, argv[++i], &args->list_limit) < 0)
				return -1;
			continue;
		}
		if (strncmp(arg, "--", 2) != 0) {
			fprintf(stderr, "%s: %s: unexpected argument (%s --help)\n", s->prog, arg, s->prog);
			return -1;
		}
		eq = strchr(arg, '=');
		snprintf(key, sizeof(key), "%.*s", (int)(eq ? (size_t)(eq - arg - 2) : strlen(arg + 2)), arg + 2);
		if (!cfg_is_key(s, key)) {
			fprintf(stderr, "%s: %s: unknown option (%s --help lists them)\n", s->prog, arg, s->prog);
			return -1;
		}
		if (eq) {
			value = eq + 1;
		} else if (i + 1 < argc) {
			value = argv[++i];
		} else {
			fprintf(stderr, "%s: --%s: missing value\n", s->prog, key);
			return -1;
		}
		snprintf(where, sizeof(where), "--%s", key);
		if (cfg_set(s, cfg, key, value, where, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s: %s\n", s->prog, err);
			return -1;
		}
	}
	return 0;
}

int cli_main(const struct cli_program *p, void *cfg, int argc, char **argv)
{
	const char *prog = p->schema->prog;
	const struct cli_command *cmd = p->commands;
	struct cli_args args = { .command = cmd->name, .list_limit = CTL_DEFAULT_LIST_LIMIT };
	char err[CFG_ERR_MAX];
	bool done = false;
	int first = 1;

	cfg_defaults(p->schema, cfg);
	if (argc > 1 && argv[1][0] != '-') {
		cmd = find_command(p, argv[1]);
		if (!cmd) {
			fprintf(stderr, "%s: unknown command '%s' (%s --help lists them)\n", prog, argv[1], prog);
			return 2;
		}
		args.command = cmd->name;
		first = 2;
	}
	if (parse_flags(p, cfg, first, argc, argv, &args, &done) < 0)
		return 2;
	if (done)
		return 0;
	if (cmd->checked && p->check(cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return 2;
	}
	return cmd->run(p, cfg, &args);
}

int cli_print_config(const struct cli_program *p, void *cfg, const struct cli_args *args)
{
	(void)args;
	cfg_dump(p->schema, cfg, stdout);
	return 0;
}

int cli_print_schema(const struct cli_program *p, void *cfg, const struct cli_args *args)
{
	struct json_out j;
	int ret = 0;

	(void)cfg;
	jo_init(&j, !args->json);
	cfg_schema_describe(p->schema, &j);
	const char *text = jo_finish(&j);

	if (j.failed || fputs(text, stdout) == EOF)
		ret = 1;
	jo_free(&j);
	return ret;
}
