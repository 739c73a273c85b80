// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfgparse.h"

void cfg_err(char *err, size_t errlen, const char *fmt, ...)
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

static const struct cfg_key *find_key(const struct cfg_schema *s, const char *name)
{
	char canon[64];
	size_t i;

	canonical(name, canon, sizeof(canon));
	for (i = 0; i < s->nkeys; i++)
		if (strcmp(s->keys[i].name, canon) == 0)
			return &s->keys[i];
	return NULL;
}

bool cfg_is_key(const struct cfg_schema *s, const char *name)
{
	return find_key(s, name) != NULL;
}

const char *cfg_enum_name(const struct cfg_schema *s, const char *key, int value)
{
	const struct cfg_key *k = find_key(s, key);
	int i;

	if (!k || k->type != CFG_ENUM || value < 0)
		return "?";
	for (i = 0; k->names[i]; i++)
		if (i == value)
			return k->names[i];
	return "?";
}

static void store_int(void *cfg, const struct cfg_key *k, uint64_t v)
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

/* a finite, non-negative number at the start of s (no sign, no space); *end: its unit */
static bool leading_number(const char *s, double *v, char **end)
{
	if (!isdigit((unsigned char)*s) && *s != '.')
		return false;
	errno = 0;
	*v = strtod(s, end);
	return !errno && *end != s && isfinite(*v) && *v >= 0;
}

/* "1.5ms" -> ns; unit required */
static bool parse_duration(const char *s, uint64_t *ns)
{
	char *end;
	double v;
	double scale;

	if (!leading_number(s, &v, &end))
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

/* "19.2kbit" -> 19200; unit required (tc's: bit, kbit, mbit, gbit) */
static bool parse_rate(const char *s, uint64_t *bps)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = { { "bit", 1 }, { "kbit", 1e3 }, { "mbit", 1e6 }, { "gbit", 1e9 } };
	char *end;
	double v;
	size_t i;

	if (!leading_number(s, &v, &end))
		return false;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix) == 0 && v * units[i].mult <= 1e15) {
			*bps = (uint64_t)llround(v * units[i].mult);
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

	if (len == 0 || len >= CFG_IFNAMSIZ)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_.@", s[i]))
			return false;
	return true;
}

static const char *parse_ifaces(const struct cfg_schema *sc, const struct cfg_key *k, void *cfg, const char *value, char *problem,
				size_t problem_len)
{
	char names[CFG_MAX_IFACES][CFG_IFNAMSIZ];
	uint32_t n = 0;
	const char *s = value;

	while (*s) {
		size_t len;

		while (*s == ',' || isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		len = strcspn(s, ", \t");
		if (!valid_ifname(s, len))
			return "not an interface name";
		if (n == k->max || n == CFG_MAX_IFACES) {
			snprintf(problem, problem_len, "too many interfaces (at most %u)", n);
			return problem;
		}
		memcpy(names[n], s, len);
		names[n][len] = '\0';
		n++;
		s += len;
	}
	memcpy((char *)cfg + k->offset, names, sizeof(names[0]) * n);
	memcpy((char *)cfg + sc->ifaces_count_offset, &n, sizeof(n));
	return NULL;
}

static int set_value(const struct cfg_schema *s, void *cfg, const struct cfg_key *k, const char *value,
		     const char *where, char *err, size_t errlen)
{
	char *field = (char *)cfg + k->offset;
	uint64_t v = 0;
	char *rest = NULL;
	const char *problem = NULL;
	char range[128] = "";
	size_t i;

	switch (k->type) {
	case CFG_UINT:
		if (!parse_u64(value, &v, &rest) || *rest)
			problem = "expected a whole number";
		break;
	case CFG_DURATION:
		if (!parse_duration(value, &v))
			problem = "expected a duration with a unit (us, ms, s)";
		break;
	case CFG_SIZE:
		if (!parse_size(value, &v))
			problem = "expected a size in bytes (suffix k, M, G or KiB, MiB, GiB)";
		break;
	case CFG_RATE:
		if (!parse_rate(value, &v))
			problem = "expected a rate with a unit (bit, kbit, mbit, gbit), e.g. 2mbit";
		break;
	case CFG_BOOL: {
		bool b;

		if (!parse_bool(value, &b)) {
			problem = "expected true or false";
			break;
		}
		*(bool *)field = b;
		return 0;
	}
	case CFG_FRACTION: {
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
	case CFG_ENUM:
		for (i = 0; k->names[i]; i++) {
			if (strcmp(value, k->names[i]) == 0) {
				*(int *)field = (int)i;
				return 0;
			}
		}
		snprintf(range, sizeof(range), "not one of the choices (see %s --help)", s->prog);
		problem = range;
		break;
	case CFG_STRING:
		if (strlen(value) >= CFG_PATH_MAX) {
			problem = "too long";
			break;
		}
		strcpy(field, value);
		return 0;
	case CFG_IFACES:
		problem = parse_ifaces(s, k, cfg, value, range, sizeof(range));
		if (!problem)
			return 0;
		break;
	case CFG_UINT_AUTO:
		if (strcmp(value, "auto") == 0) {
			*(int *)field = CFG_AUTO;
			return 0;
		}
		if (!parse_u64(value, &v, &rest) || *rest || v < k->min || v > k->max) {
			size_t len = 0;

			len += (size_t)snprintf(range, sizeof(range), "expected ");
			for (uint64_t x = k->min; x <= k->max && len < sizeof(range) - 24; x++)
				len += (size_t)snprintf(range + len, sizeof(range) - len, "%llu, ",
							(unsigned long long)x);
			if (len >= 2)
				len -= 2;
			snprintf(range + len, sizeof(range) - len, " or auto");
			problem = range;
			break;
		}
		*(int *)field = (int)v;
		return 0;
	}
	if (!problem && (v < k->min || v > k->max)) {
		if (k->type == CFG_DURATION)
			snprintf(range, sizeof(range), "must lie between %gms and %gms", (double)k->min / 1e6,
				 (double)k->max / 1e6);
		else
			snprintf(range, sizeof(range), "must lie between %llu and %llu", (unsigned long long)k->min,
				 (unsigned long long)k->max);
		problem = range;
	}
	if (problem) {
		cfg_err(err, errlen, "%s: %s = %s: %s", where, k->name, value, problem);
		return -1;
	}
	store_int(cfg, k, v);
	return 0;
}

int cfg_set(const struct cfg_schema *s, void *cfg, const char *key, const char *value, const char *where, char *err,
	    size_t errlen)
{
	const struct cfg_key *k = find_key(s, key);

	if (!k) {
		cfg_err(err, errlen, "%s: %s = %s: unknown key (%s --help lists them)", where, key, value, s->prog);
		return -1;
	}
	return set_value(s, cfg, k, value, where, err, errlen);
}

void cfg_defaults(const struct cfg_schema *s, void *cfg)
{
	size_t i;
	char err[CFG_ERR_MAX];

	memset(cfg, 0, s->size);
	for (i = 0; i < s->nkeys; i++)
		if (set_value(s, cfg, &s->keys[i], s->keys[i].def, "default", err, sizeof(err)) < 0)
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

int cfg_load_text(const struct cfg_schema *s, void *cfg, const char *text, size_t len, const char *name, char *err,
		  size_t errlen)
{
	char line[1024], where[CFG_PATH_MAX + 32];
	size_t pos = 0, lineno = 0;

	while (pos < len) {
		size_t n = 0;
		char *eq, *key, *value, *hash;

		lineno++;
		while (pos < len && text[pos] != '\n') {
			if (text[pos] == '\0') {
				cfg_err(err, errlen, "%s:%zu: a NUL byte: not a text file", name, lineno);
				return -1;
			}
			if (n + 1 < sizeof(line))
				line[n++] = text[pos];
			else {
				cfg_err(err, errlen, "%s:%zu: line longer than %zu bytes", name, lineno,
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
			cfg_err(err, errlen, "%s: %s: expected key = value", where, key);
			return -1;
		}
		*eq = '\0';
		value = trim(eq + 1);
		key = trim(key);
		if (cfg_set(s, cfg, key, value, where, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int cfg_load_file(const struct cfg_schema *s, void *cfg, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0, cap = 0, n;
	int ret;

	if (!f) {
		cfg_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (cap - len < 4096) {
			char *grown;

			if (cap > (1u << 20)) {
				cfg_err(err, errlen, "%s: larger than 1 MiB: not a configuration file", path);
				free(text);
				fclose(f);
				return -1;
			}
			grown = realloc(text, cap + 8192);
			if (!grown) {
				free(text);
				fclose(f);
				cfg_err(err, errlen, "%s: out of memory", path);
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
		cfg_err(err, errlen, "%s: read error", path);
		free(text);
		return -1;
	}
	ret = cfg_load_text(s, cfg, text, len, path, err, errlen);
	free(text);
	return ret;
}

static const char *type_name(const struct cfg_key *k, char *buf, size_t len)
{
	switch (k->type) {
	case CFG_UINT:
		return "integer";
	case CFG_BOOL:
		return "bool";
	case CFG_DURATION:
		return "duration";
	case CFG_SIZE:
		return "size";
	case CFG_FRACTION:
		return "fraction";
	case CFG_ENUM:
		return "choice";
	case CFG_STRING:
		return "path";
	case CFG_IFACES:
		return "interfaces";
	case CFG_UINT_AUTO:
		snprintf(buf, len, "%llu..%llu|auto", (unsigned long long)k->min, (unsigned long long)k->max);
		return buf;
	case CFG_RATE:
		return "rate";
	}
	return "?";
}

void cfg_print_keys(const struct cfg_schema *s, FILE *out)
{
	size_t i;

	for (i = 0; i < s->nkeys; i++) {
		const struct cfg_key *k = &s->keys[i];
		char flag[64], tbuf[32];
		size_t j;

		snprintf(flag, sizeof(flag), "--%s", k->name);
		for (j = 2; flag[j]; j++)
			if (flag[j] == '_')
				flag[j] = '-';
		fprintf(out, "  %-26s %-10s default %s\n      %s\n", flag, type_name(k, tbuf, sizeof(tbuf)),
			*k->def ? k->def : "(none)", k->help);
	}
}

static void print_value(const struct cfg_schema *s, const void *cfg, const struct cfg_key *k, FILE *out)
{
	const char *field = (const char *)cfg + k->offset;
	uint64_t v = 0;
	uint32_t i, n;

	if (k->size == sizeof(uint64_t))
		memcpy(&v, field, sizeof(v));
	else if (k->size == sizeof(uint32_t))
		v = *(const uint32_t *)field;
	switch (k->type) {
	case CFG_UINT:
	case CFG_SIZE:
		fprintf(out, "%llu", (unsigned long long)v);
		break;
	case CFG_DURATION:
		fprintf(out, "%gms", (double)v / 1e6);
		break;
	case CFG_RATE:
		fprintf(out, "%llubit", (unsigned long long)v);
		break;
	case CFG_BOOL:
		fprintf(out, "%s", *(const bool *)field ? "true" : "false");
		break;
	case CFG_FRACTION:
		fprintf(out, "%g", *(const double *)field);
		break;
	case CFG_ENUM:
		fprintf(out, "%s", k->names[*(const int *)field]);
		break;
	case CFG_STRING:
		fprintf(out, "%s", field);
		break;
	case CFG_IFACES:
		memcpy(&n, (const char *)cfg + s->ifaces_count_offset, sizeof(n));
		for (i = 0; i < n; i++)
			fprintf(out, "%s%s", i ? "," : "", field + (size_t)i * CFG_IFNAMSIZ);
		break;
	case CFG_UINT_AUTO:
		if (*(const int *)field == CFG_AUTO)
			fprintf(out, "auto");
		else
			fprintf(out, "%d", *(const int *)field);
		break;
	}
}

void cfg_dump(const struct cfg_schema *s, const void *cfg, FILE *out)
{
	size_t i;

	for (i = 0; i < s->nkeys; i++) {
		fprintf(out, "%s = ", s->keys[i].name);
		print_value(s, cfg, &s->keys[i], out);
		fputc('\n', out);
	}
}

/* ---------------------------------------------------------------- the command line */

int cfg_parse_args(const struct cfg_schema *s, void *cfg, int argc, char **argv, struct cfg_cli *cli,
		   void (*usage)(FILE *out), const char *version)
{
	char err[CFG_ERR_MAX];
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

		if (strcmp(arg, "-c") == 0 || strcmp(arg, "--config") == 0) {
			i++;
			continue;
		}
		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			usage(stdout);
			exit(0);
		}
		if (strcmp(arg, "--version") == 0) {
			printf("%s %s\n", s->prog, version);
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
