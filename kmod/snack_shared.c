// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcp_snack's copy of the code the airtcp modules share.  Each module
 * carries its own: no symbol crosses modules (insmod needs no order), and
 * Kbuild wants every object in one module only (6.12 warns otherwise).
 */
#include "airtcp_pernet.c"
#include "airtcp_tcp.c"
