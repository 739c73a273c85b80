// SPDX-License-Identifier: GPL-2.0-only
/* The one object the version is compiled into (the Makefile rebuilds it when it changes). */
#include "version.h"

#ifndef AIRTCP_VERSION
#define AIRTCP_VERSION "unknown"
#endif

const char *airtcp_version(void)
{
	return AIRTCP_VERSION;
}
