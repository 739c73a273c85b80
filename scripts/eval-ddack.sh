#!/usr/bin/env bash
# The tcp_ddack evaluation of Documentation/tcp_ddack.rst, "Evaluation":
# Vaidya99 Fig. 4 (no wireless errors, congestion loss on the wired link,
# 20 ms wireless delay): d = 0, 80 ms, 200 ms, and 80 ms with SACK
# stripping, against reno-classic and cubic, 5 interleaved runs of 20 s.
# About 25 minutes per loss rate in the VM.  Results in results/ddack-*.json.
set -euo pipefail
cd "$(dirname "$0")/.."
schemes=testbed/schemes/ddack-eval/d0.toml,ddack,testbed/schemes/ddack-eval/d200.toml,ddack-strip
for loss in ${LOSSES:-1 3}; do
	.venv/bin/airtcp run --profile "netem-profiles/vaidya-20ms-cong${loss}pct.toml" \
		--scheme "$schemes" --runs "${RUNS:-5}" --duration "${DURATION:-20s}" \
		--baseline d0/reno-classic --out "results/ddack-fig4-cong${loss}pct.json"
done
