"""Vaidya99's whole scheme against the sender it was built for (the VM under make test).

Over arqd's immediate (out-of-order) delivery, a repaired frame reaches
the receiver one link round trip late, after later segments have drawn
three dupacks: ns-2's Reno (``reno-ns2``: fixed threshold, no undo) takes
every such repair for a loss and halves its window.  tcp_ddack at the
receiver holds the third and later dupacks for d and drops them when the
repair fills the hole.  Checked from the runner's result file: the
sender's own recovery counter, tcp_ddack's episode counters, arqd's.  The
goodput this buys is measured in Documentation/arq.rst, not asserted here.
"""

from __future__ import annotations

from pathlib import Path

from airtcp import result

from .conftest import airtcp


def test_delayed_dupacks_spare_ns2_reno_the_link_layers_repairs(tmp_path: Path) -> None:
    """The shipped experiment (ns-2's 20-packet window, 1000-byte packets), shortened, at 16 KiB errors."""
    out = tmp_path / "r.json"
    done = airtcp(
        "run", "--experiment", "arq-vaidya-fig7a-ns2", "--profile", "vaidya99-exp16k-20ms",
        "--scheme", "arq-eval/vaidya,arq-eval/vaidya-ddack", "--sender", "reno-ns2", "--duration", "10s", "--runs", "1",
        "--out", str(out), "--no-plot", "--backend", "native",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    runs = {case["scheme"]: case["runs"][0] for case in result.load(out)["cases"]}
    for run in runs.values():
        assert run["error"] is None
        assert run["sysctls"]["s"]["net.ipv4.tcp_timestamps"] == "0"
        assert run["sysctls"]["s"]["net.ipv4.tcp_max_reordering"] == "3"
        assert run["window_clamp"]["wh"]["route"].endswith(" window 20000"), run["window_clamp"]
        # the link layer repaired the hop's losses itself, and gave none up
        link = run["components"]["arq"]["bs"]["sender"]
        assert link["retransmitted"] >= 20 and link["given_up"] == 0, link
    recoveries = {name: run["nstat"]["s"].get("TcpExtTCPRenoRecovery", 0) for name, run in runs.items()}
    ddack = runs["vaidya-ddack"]["components"]["tcp_ddack"]
    print(f"Reno recoveries {recoveries}; tcp_ddack {ddack}")
    # Without Delayed Dupacks the link's repairs cost the sender recoveries (VM: 33-39 in 20 s, 17 in 10 s)
    assert recoveries["vaidya"] >= 8, recoveries
    # With them most holes fill within d and the dupacks that would trigger one are dropped (VM: 1-5 in 20 s)
    assert ddack["episodes_filled"] >= 10 and ddack["discarded"] > 0, ddack
    assert recoveries["vaidya-ddack"] * 2 <= recoveries["vaidya"], recoveries
