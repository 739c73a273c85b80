// SPDX-License-Identifier: GPL-2.0-only
/*
 * The filter registry: every filter's ops table, found by name.  The
 * configuration's filter key lists the same names (config.c); test_filter
 * checks that the two agree.
 */
#include <string.h>

#include "filter.h"

const struct pep_filter_ops *const pep_filters[] = {
	&filter_passthrough,
	&filter_snoop,
	&filter_snoopplus,
	&filter_pc,
	NULL,
};

const struct pep_filter_ops *filter_find(const char *name)
{
	const struct pep_filter_ops *const *f;

	for (f = pep_filters; *f; f++)
		if (strcmp((*f)->name, name) == 0)
			return *f;
	return NULL;
}
