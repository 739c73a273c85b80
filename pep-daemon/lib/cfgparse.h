/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The configuration engine shared by pepd and arqd: a daemon describes its
 * keys in one table (name, type, field, range, default, help) and gets from
 * it the file parser, the --key value flags, the defaults, --help,
 * `check`'s dump and `schema` (what the docs and the testbed are written
 * from), which therefore can never disagree.  A bad value is one
 * line naming where it came from, the key and the value.
 */
#ifndef AIRTCP_CFGPARSE_H
#define AIRTCP_CFGPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CFG_MAX_IFACES 8
#define CFG_IFNAMSIZ 16
#define CFG_PATH_MAX 108	/* sun_path */
#define CFG_ERR_MAX 512

enum cfg_type {
	CFG_UINT,	/* decimal or 0x hex, within [min, max] */
	CFG_BOOL,	/* true/false, yes/no, on/off, 1/0 */
	CFG_DURATION,	/* number with unit us, ms or s */
	CFG_SIZE,	/* bytes, optional k/K/KiB, M/MiB, G/GiB (powers of 1024) */
	CFG_FRACTION,	/* 0.01 or 1% (a double strictly between 0 and 1) */
	CFG_ENUM,	/* one of names (an int field) */
	CFG_STRING,	/* a path, < CFG_PATH_MAX */
	CFG_IFACES,	/* comma- or space-separated interface names; count at the schema's ifaces_count_offset */
	CFG_UINT_AUTO,	/* an int field: min..max, or "auto" (-1) */
	CFG_RATE,	/* bits per second (uint64): number with unit bit, kbit, mbit or gbit (powers of 1000, as tc) */
};

#define CFG_AUTO (-1)
/* a CFG_UINT_AUTO key's error lists its values up to this many, else names its range */
#define CFG_AUTO_LISTED 8

struct cfg_key {
	const char *name;
	enum cfg_type type;
	size_t offset;
	size_t size;		/* of the field: integers of 4 or 8 bytes */
	uint64_t min, max;	/* integers, durations (ns), sizes (bytes); CFG_IFACES: max count */
	const char *const *names;	/* CFG_ENUM */
	const char *def;	/* default, parsed by the same code as any value */
	const char *help;	/* what it means, one line */
	const char *unit;	/* CFG_UINT: what it counts ("frames"), or NULL */
	const char *section;	/* starts a group of keys in the help and the example config */
	bool required;		/* empty (the default) is an error; example shows a typical value */
	const char *example;
};

struct cfg_schema {
	const char *prog;	/* "pepd": named in the hints of error messages */
	const struct cfg_key *keys;
	size_t nkeys;
	size_t size;		/* of the configuration struct */
	size_t ifaces_count_offset;	/* the uint32_t count of the (one) CFG_IFACES key */
};

/* .offset and .size of a field of the configuration struct, for the key tables */
#define CFG_FIELD(type, field) .offset = offsetof(type, field), .size = sizeof(((type *)0)->field)

void cfg_defaults(const struct cfg_schema *s, void *cfg);
int cfg_set(const struct cfg_schema *s, void *cfg, const char *key, const char *value, const char *where, char *err,
	    size_t errlen);
int cfg_load_text(const struct cfg_schema *s, void *cfg, const char *text, size_t len, const char *name, char *err,
		  size_t errlen);
int cfg_load_file(const struct cfg_schema *s, void *cfg, const char *path, char *err, size_t errlen);
void cfg_print_keys(const struct cfg_schema *s, FILE *out);
void cfg_dump(const struct cfg_schema *s, const void *cfg, FILE *out);
bool cfg_is_key(const struct cfg_schema *s, const char *name);
const char *cfg_enum_name(const struct cfg_schema *s, const char *key, int value);

/* Every required key has a value; else -1 and one line in err naming the first missing one. */
int cfg_check_required(const struct cfg_schema *s, const void *cfg, char *err, size_t errlen);

struct json_out;

/*
 * The schema itself, for generators and the testbed: per key its name,
 * flag, type, default (as written and, for numbers, its value in the base
 * unit), range, unit, section and meaning.  The one source the knob tables
 * of the documentation, the example configurations and the testbed's
 * validation are written from (scripts/knobs.py).
 */
void cfg_schema_describe(const struct cfg_schema *s, struct json_out *j);

void cfg_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
