// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

void jo_init(struct json_out *j, bool human)
{
	memset(j, 0, sizeof(*j));
	j->human = human;
}

void jo_free(struct json_out *j)
{
	free(j->buf);
	memset(j, 0, sizeof(*j));
}

__attribute__((format(printf, 2, 3))) static void emit(struct json_out *j, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = j->cap - j->len;

		va_start(ap, fmt);
		n = vsnprintf(j->buf ? j->buf + j->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			j->failed = true;
			return;
		}
		if ((size_t)n < room) {
			j->len += (size_t)n;
			return;
		}
		size_t ncap = j->cap ? j->cap * 2 : 4096;

		while (ncap - j->len <= (size_t)n)
			ncap *= 2;
		char *nbuf = realloc(j->buf, ncap);

		if (!nbuf) {
			j->failed = true;
			return;
		}
		j->buf = nbuf;
		j->cap = ncap;
	}
}

static void indent(struct json_out *j)
{
	for (int i = 0; i < j->depth; i++)
		emit(j, "  ");
}

static void escaped(struct json_out *j, const char *s)
{
	emit(j, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			emit(j, "\\%c", c);
		else if (c < 0x20)
			emit(j, "\\u%04x", c);
		else
			emit(j, "%c", c);
	}
	emit(j, "\"");
}

/* Separator, indentation and key before a value or container. */
static void lead(struct json_out *j, const char *key)
{
	int d = j->depth;

	if (j->human) {
		indent(j);
		if (d > 0 && j->in_array[d - 1] && !key)
			emit(j, "- ");
		else if (key)
			emit(j, "%s: ", key);
		return;
	}
	if (d > 0 && j->need_comma[d - 1])
		emit(j, ",");
	if (d > 0)
		j->need_comma[d - 1] = true;
	if (key) {
		escaped(j, key);
		emit(j, ":");
	}
}

static void open_container(struct json_out *j, const char *key, bool array)
{
	if (j->depth >= JSON_MAX_DEPTH) {
		j->failed = true;
		return;
	}
	lead(j, key);
	if (j->human)
		emit(j, "\n");
	else
		emit(j, array ? "[" : "{");
	j->need_comma[j->depth] = false;
	j->in_array[j->depth] = array;
	j->depth++;
}

static void close_container(struct json_out *j, bool array)
{
	if (j->depth == 0) {
		j->failed = true;
		return;
	}
	j->depth--;
	if (!j->human)
		emit(j, array ? "]" : "}");
}

void jo_obj_begin(struct json_out *j, const char *key)
{
	if (j->human && j->depth == 0 && !key) {
		j->human_root = true;	/* the outermost object needs no heading */
		return;
	}
	open_container(j, key, false);
}

void jo_obj_end(struct json_out *j)
{
	if (j->human && j->depth == 0 && j->human_root) {
		j->human_root = false;
		return;
	}
	close_container(j, false);
}

void jo_arr_begin(struct json_out *j, const char *key)
{
	open_container(j, key, true);
}

void jo_arr_end(struct json_out *j)
{
	close_container(j, true);
}

void jo_u64(struct json_out *j, const char *key, uint64_t v)
{
	lead(j, key);
	emit(j, "%llu", (unsigned long long)v);
	if (j->human)
		emit(j, "\n");
}

void jo_dbl(struct json_out *j, const char *key, double v)
{
	lead(j, key);
	if (!isfinite(v))
		emit(j, j->human ? "-" : "null");
	else
		emit(j, "%.6g", v);
	if (j->human)
		emit(j, "\n");
}

void jo_str(struct json_out *j, const char *key, const char *v)
{
	lead(j, key);
	if (j->human)
		emit(j, "%s\n", v);
	else
		escaped(j, v);
}

void jo_bool(struct json_out *j, const char *key, bool v)
{
	lead(j, key);
	emit(j, "%s", v ? "true" : "false");
	if (j->human)
		emit(j, "\n");
}

void jo_fragment(struct json_out *frag, const struct json_out *at)
{
	free(frag->buf);
	memset(frag, 0, sizeof(*frag));
	frag->human = at->human;
	frag->human_root = at->human_root;
	frag->depth = at->depth;
	memcpy(frag->in_array, at->in_array, sizeof(frag->in_array));
}

void jo_splice(struct json_out *j, const struct json_out *frag)
{
	int d = j->depth;

	if (frag->failed)
		j->failed = true;
	if (!frag->len)
		return;
	/* the fragment began as if nothing came before it at its level */
	if (!j->human && d > 0 && j->need_comma[d - 1])
		emit(j, ",");
	emit(j, "%.*s", (int)frag->len, frag->buf);
	if (d > 0)
		j->need_comma[d - 1] = true;
}

const char *jo_finish(struct json_out *j)
{
	if (!j->human)
		emit(j, "\n");
	if (!j->buf)
		emit(j, "%s", "");
	return j->buf ? j->buf : "";
}
