// SPDX-License-Identifier: GPL-2.0-only
/*
 * A sock_ops program that makes the kernel's own TCP put an option the
 * SNACK codec does not know into every segment of the sockets of its
 * cgroup: kind 253 (RFC 4727/6994 experimental) with the experiment
 * identifier 0xa1c5.  It stands in for TCP-AO in the VM, whose kernels
 * (Debian's 6.1 and 6.12) are built without CONFIG_TCP_AO: both are
 * options tcp_snack must leave where TCP put them.  Loaded by
 * unknown_opt_load.c for tests/integration/test_snack.py.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define OPT_LEN 4

SEC("sockops")
int unknown_opt(struct bpf_sock_ops *skops)
{
	__u8 opt[OPT_LEN] = { 253, OPT_LEN, 0xa1, 0xc5 };

	switch (skops->op) {
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
					  BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		bpf_reserve_hdr_opt(skops, OPT_LEN, 0);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		bpf_store_hdr_opt(skops, opt, OPT_LEN, 0);
		break;
	}
	return 1;
}

char _license[] SEC("license") = "GPL";
