/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One writer, two renderings: JSON for machines, an indented "key: value"
 * listing for people.  Output accumulates in a growable buffer.
 */
#ifndef AIRTCP_JSON_H
#define AIRTCP_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 16

struct json_out {
	char *buf;
	size_t len, cap;
	bool human;
	bool failed;		/* out of memory: the output is incomplete */
	bool human_root;	/* human mode: inside the unlabelled outermost object */
	int depth;
	bool need_comma[JSON_MAX_DEPTH];
	bool in_array[JSON_MAX_DEPTH];
};

void jo_init(struct json_out *j, bool human);
void jo_free(struct json_out *j);
void jo_obj_begin(struct json_out *j, const char *key);
void jo_obj_end(struct json_out *j);
void jo_arr_begin(struct json_out *j, const char *key);
void jo_arr_end(struct json_out *j);
void jo_u64(struct json_out *j, const char *key, uint64_t v);
void jo_dbl(struct json_out *j, const char *key, double v);
void jo_str(struct json_out *j, const char *key, const char *v);
void jo_bool(struct json_out *j, const char *key, bool v);
/*
 * Fragments, for output that another thread renders: frag starts empty in
 * the state of `at` (depth, open arrays and objects, human or JSON), as if
 * it continued `at`; jo_splice appends it to j (which must be in that same
 * state), separating it from what j already has there.
 */
void jo_fragment(struct json_out *frag, const struct json_out *at);
void jo_splice(struct json_out *j, const struct json_out *frag);

/* Finish: a trailing newline; returns the text (owned by j). */
const char *jo_finish(struct json_out *j);

#endif
