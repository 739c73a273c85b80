// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfgparse.h"
#include "json.h"

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

/*
 * Numbers are decimal (or hex with 0x, for whole numbers), never octal: a
 * leading zero before another digit, which C's strtoull would read as
 * octal and a person as decimal, is refused with its own message.
 */
static bool leading_zero(const char *s)
{
	return s[0] == '0' && isdigit((unsigned char)s[1]);
}

#define LEADING_ZERO_PROBLEM "a leading zero (octal to C, decimal to people): write it in decimal, or in hex with 0x"

static bool parse_u64(const char *s, uint64_t *out, char **rest)
{
	unsigned long long v;
	int base = 10;
	char *end;

	if (!isdigit((unsigned char)*s) || leading_zero(s))
		return false;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		if (!isxdigit((unsigned char)s[2]))
			return false;
		base = 16;
	}
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || end == s)
		return false;
	*out = v;
	*rest = end;
	return true;
}

/*
 * A finite, non-negative decimal number at the start of s: digits, a
 * fraction, an exponent (no sign, space, hex or leading zero); *end: its unit.
 */
static bool leading_number(const char *s, double *v, char **end)
{
	const char *p = s;
	char *e;

	if (leading_zero(s))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			;
	if (p == s || (p == s + 1 && *s == '.'))
		return false;
	if ((*p == 'e' || *p == 'E') &&
	    (isdigit((unsigned char)p[1]) || ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2]))))
		for (p += 2; isdigit((unsigned char)*p); p++)
			;
	errno = 0;
	*v = strtod(s, &e);
	*end = (char *)p;
	return !errno && e == p && isfinite(*v) && *v >= 0;
}

/* The units each kind of value takes: the parsers' tables, and the schema's (cfg_schema_describe). */
struct cfg_unit {
	const char *suffix;
	uint64_t mult;
};

static const struct cfg_unit duration_units[] = {
	{ "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 }, { NULL, 0 },
};
/* powers of 1024 */
static const struct cfg_unit size_units[] = {
	{ "", 1 },		{ "k", 1ULL << 10 },   { "K", 1ULL << 10 }, { "KiB", 1ULL << 10 }, { "M", 1ULL << 20 },
	{ "MiB", 1ULL << 20 }, { "G", 1ULL << 30 }, { "GiB", 1ULL << 30 }, { NULL, 0 },
};
/* tc's: powers of 1000 */
static const struct cfg_unit rate_units[] = {
	{ "bit", 1 }, { "kbit", 1000 }, { "mbit", 1000000 }, { "gbit", 1000000000 }, { NULL, 0 },
};
static const char *const bool_true[] = { "true", "yes", "on", "1", NULL };
static const char *const bool_false[] = { "false", "no", "off", "0", NULL };

#define DURATION_MAX_NS 1e18
#define RATE_MAX_BPS 1e15

static const struct cfg_unit *find_unit(const struct cfg_unit *units, const char *suffix)
{
	for (; units->suffix; units++)
		if (strcmp(units->suffix, suffix) == 0)
			return units;
	return NULL;
}

/* "1.5ms" -> 1500000, "19.2kbit" -> 19200: a number, then one of units (required), at most limit */
static bool parse_scaled(const char *s, const struct cfg_unit *units, double limit, uint64_t *out)
{
	const struct cfg_unit *u;
	char *end;
	double v;

	if (!leading_number(s, &v, &end))
		return false;
	u = find_unit(units, end);
	if (!u || v * (double)u->mult > limit)
		return false;
	*out = (uint64_t)llround(v * (double)u->mult);
	return true;
}

/* a whole number of bytes, then one of size_units */
static bool parse_size(const char *s, uint64_t *bytes)
{
	const struct cfg_unit *u;
	uint64_t v;
	char *rest;

	if (!parse_u64(s, &v, &rest))
		return false;
	u = find_unit(size_units, rest);
	if (!u || v > UINT64_MAX / u->mult)
		return false;
	*bytes = v * u->mult;
	return true;
}

static bool parse_bool(const char *s, bool *b)
{
	size_t i;

	for (i = 0; bool_true[i]; i++) {
		if (strcmp(s, bool_true[i]) == 0) {
			*b = true;
			return true;
		}
		if (strcmp(s, bool_false[i]) == 0) {
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

/* "expected one of a, b or c" */
static const char *choices_text(const struct cfg_key *k, char *buf, size_t len)
{
	size_t used = (size_t)snprintf(buf, len, "expected one of ");
	size_t i;

	for (i = 0; k->names[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i == 0 ? "" : k->names[i + 1] ? ", " : " or ",
					 k->names[i]);
	return buf;
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
			problem = leading_zero(value) ? LEADING_ZERO_PROBLEM : "expected a whole number";
		break;
	case CFG_DURATION:
		if (!parse_scaled(value, duration_units, DURATION_MAX_NS, &v))
			problem = leading_zero(value) ? LEADING_ZERO_PROBLEM : "expected a duration with a unit (us, ms, s)";
		break;
	case CFG_SIZE:
		if (!parse_size(value, &v))
			problem = leading_zero(value) ? LEADING_ZERO_PROBLEM
						      : "expected a size in bytes (suffix k, M, G or KiB, MiB, GiB)";
		break;
	case CFG_RATE:
		if (!parse_scaled(value, rate_units, RATE_MAX_BPS, &v))
			problem = leading_zero(value) ? LEADING_ZERO_PROBLEM
						      : "expected a rate with a unit (bit, kbit, mbit, gbit), e.g. 2mbit";
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

		if (!leading_number(value, &d, &end)) {
			problem = leading_zero(value) ? LEADING_ZERO_PROBLEM : "expected a fraction like 0.01 or 1%";
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
		problem = choices_text(k, range, sizeof(range));
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
		if (leading_zero(value)) {
			problem = LEADING_ZERO_PROBLEM;
			break;
		}
		if (!parse_u64(value, &v, &rest) || *rest || v < k->min || v > k->max) {
			size_t len = 0;

			if (k->max - k->min >= CFG_AUTO_LISTED) {
				snprintf(range, sizeof(range), "expected a whole number from %llu to %llu, or auto",
					 (unsigned long long)k->min, (unsigned long long)k->max);
				problem = range;
				break;
			}
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

#define HELP_INDENT 6
#define HELP_WIDTH 100

/* text as lines of at most width columns (a longer word stands alone), each indented */
static void print_wrapped(FILE *out, const char *text, int indent, int width)
{
	while (*text) {
		int room = width - indent, len = (int)strlen(text), cut = len;

		if (len > room) {
			for (cut = room; cut > 0 && text[cut] != ' '; cut--)
				;
			if (cut == 0)
				cut = (int)strcspn(text, " ");
		}
		fprintf(out, "%*s%.*s\n", indent, "", cut, text);
		text += cut;
		while (*text == ' ')
			text++;
	}
}

/* "--rto-min" for rto_min */
static void flag_name(const struct cfg_key *k, char *buf, size_t len)
{
	size_t i;

	snprintf(buf, len, "--%s", k->name);
	for (i = 2; buf[i]; i++)
		if (buf[i] == '_')
			buf[i] = '-';
}

void cfg_print_keys(const struct cfg_schema *s, FILE *out)
{
	size_t i;

	for (i = 0; i < s->nkeys; i++) {
		const struct cfg_key *k = &s->keys[i];
		char flag[64], tbuf[32], range[64] = "";

		if (k->section)
			fprintf(out, "%s%s:\n", i ? "\n" : "", k->section);
		flag_name(k, flag, sizeof(flag));
		if (k->type == CFG_UINT)
			snprintf(range, sizeof(range), " (%llu..%llu%s%s)", (unsigned long long)k->min,
				 (unsigned long long)k->max, k->unit ? " " : "", k->unit ? k->unit : "");
		fprintf(out, "  %-26s %-10s default %s%s\n", flag, type_name(k, tbuf, sizeof(tbuf)),
			k->required ? "(required)" : *k->def ? k->def : "(none)", range);
		print_wrapped(out, k->help, HELP_INDENT, HELP_WIDTH);
	}
}

/* an integer field of 4 or 8 bytes (store_int's counterpart); 0 for other fields */
static uint64_t load_int(const void *cfg, const struct cfg_key *k)
{
	const char *field = (const char *)cfg + k->offset;
	uint64_t v64;
	uint32_t v32;

	if (k->size == sizeof(v64)) {
		memcpy(&v64, field, sizeof(v64));
		return v64;
	}
	if (k->size == sizeof(v32)) {
		memcpy(&v32, field, sizeof(v32));
		return v32;
	}
	return 0;
}

static void print_value(const struct cfg_schema *s, const void *cfg, const struct cfg_key *k, FILE *out)
{
	const char *field = (const char *)cfg + k->offset;
	uint64_t v = load_int(cfg, k);
	uint32_t i, n;

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

int cfg_check_required(const struct cfg_schema *s, const void *cfg, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < s->nkeys; i++) {
		const struct cfg_key *k = &s->keys[i];
		const char *field = (const char *)cfg + k->offset;
		uint32_t n = 1;

		if (!k->required)
			continue;
		if (k->type == CFG_IFACES)
			memcpy(&n, (const char *)cfg + s->ifaces_count_offset, sizeof(n));
		else if (k->type == CFG_STRING)
			n = field[0] != '\0';
		if (!n) {
			cfg_err(err, errlen, "%s = : missing: %s is required, e.g. %s = %s", k->name, k->name, k->name,
				k->example ? k->example : "...");
			return -1;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- the schema, for generators */

static const char *const type_ids[] = {
	[CFG_UINT] = "uint", [CFG_BOOL] = "bool", [CFG_DURATION] = "duration", [CFG_SIZE] = "size",
	[CFG_FRACTION] = "fraction", [CFG_ENUM] = "choice", [CFG_STRING] = "string", [CFG_IFACES] = "interfaces",
	[CFG_UINT_AUTO] = "uint_or_auto", [CFG_RATE] = "rate",
};

/* what min, max and a number's default_value count in */
static const char *base_unit(const struct cfg_key *k)
{
	switch (k->type) {
	case CFG_DURATION:
		return "ns";
	case CFG_SIZE:
		return "bytes";
	case CFG_RATE:
		return "bit/s";
	case CFG_IFACES:
		return "interfaces";
	default:
		return k->unit;
	}
}

static void describe_key(const struct cfg_key *k, const void *defaults, const char *section, struct json_out *j)
{
	const char *field = (const char *)defaults + k->offset;
	char flag[64];
	uint64_t v = load_int(defaults, k);
	size_t i;

	flag_name(k, flag, sizeof(flag));
	jo_obj_begin(j, NULL);
	jo_str(j, "name", k->name);
	jo_str(j, "flag", flag);
	jo_str(j, "type", type_ids[k->type]);
	jo_str(j, "section", section);
	jo_str(j, "default", k->def);
	switch (k->type) {
	case CFG_UINT:
	case CFG_DURATION:
	case CFG_SIZE:
	case CFG_RATE:
		jo_u64(j, "default_value", v);
		/* fall through */
	case CFG_IFACES:
		jo_u64(j, "min", k->min);
		jo_u64(j, "max", k->max);
		break;
	case CFG_UINT_AUTO:
		jo_u64(j, "min", k->min);
		jo_u64(j, "max", k->max);
		if (*(const int *)field != CFG_AUTO)
			jo_u64(j, "default_value", (uint64_t)*(const int *)field);
		break;
	case CFG_FRACTION:
		jo_dbl(j, "default_value", *(const double *)field);
		jo_u64(j, "min", 0);	/* both excluded */
		jo_u64(j, "max", 1);
		break;
	case CFG_BOOL:
		jo_bool(j, "default_value", *(const bool *)field);
		break;
	case CFG_ENUM:
		jo_arr_begin(j, "choices");
		for (i = 0; k->names[i]; i++)
			jo_str(j, NULL, k->names[i]);
		jo_arr_end(j);
		break;
	case CFG_STRING:
		jo_u64(j, "max_length", CFG_PATH_MAX - 1);
		break;
	}
	if (base_unit(k))
		jo_str(j, "unit", base_unit(k));
	jo_bool(j, "required", k->required);
	if (k->example)
		jo_str(j, "example", k->example);
	jo_str(j, "help", k->help);
	jo_obj_end(j);
}

static void describe_units(struct json_out *j, const char *key, const struct cfg_unit *units)
{
	jo_obj_begin(j, key);
	for (; units->suffix; units++)
		jo_u64(j, units->suffix, units->mult);
	jo_obj_end(j);
}

static void describe_words(struct json_out *j, const char *key, const char *const *words)
{
	jo_arr_begin(j, key);
	for (; *words; words++)
		jo_str(j, NULL, *words);
	jo_arr_end(j);
}

void cfg_schema_describe(const struct cfg_schema *s, struct json_out *j)
{
	void *defaults = malloc(s->size);
	const char *section = "";
	size_t i;

	if (!defaults) {
		j->failed = true;
		return;
	}
	cfg_defaults(s, defaults);
	jo_obj_begin(j, NULL);
	jo_str(j, "program", s->prog);
	/* how values are written: suffix -> multiplier to the base unit; the words of a bool */
	jo_obj_begin(j, "units");
	describe_units(j, "duration", duration_units);
	describe_units(j, "size", size_units);
	describe_units(j, "rate", rate_units);
	jo_obj_end(j);
	jo_obj_begin(j, "bool");
	describe_words(j, "true", bool_true);
	describe_words(j, "false", bool_false);
	jo_obj_end(j);
	jo_arr_begin(j, "keys");
	for (i = 0; i < s->nkeys; i++) {
		if (s->keys[i].section)
			section = s->keys[i].section;
		describe_key(&s->keys[i], defaults, section, j);
	}
	jo_arr_end(j);
	jo_obj_end(j);
	free(defaults);
}
