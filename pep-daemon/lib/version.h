/* SPDX-License-Identifier: GPL-2.0-only */
/* The build's version, as the Makefile was given it (AIRTCP_VERSION), or "unknown". */
#ifndef AIRTCP_VERSION_H
#define AIRTCP_VERSION_H

const char *airtcp_version(void);

#endif
