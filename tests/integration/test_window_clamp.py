"""transfer.window_clamp holds over a hop that delivers out of order (the VM under make test).

arq with immediate delivery hands repaired segments up out of order, so
the receiver holds out-of-order data for most of the transfer.  With
``window = "4KiB"`` (iperf3 -w: socket buffers) that data eats the
receiver's buffer and the advertised window falls below 8 segments; with
``window_clamp = "4KiB"`` the receiver advertises exactly 8 segments of
500 bytes (MSS 512 less 12 bytes of timestamps), 4000 bytes, and never
more, even though arqd routes WH's traffic through its own table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airtcp.experiment import Overrides, parse_experiment
from airtcp.runner import prepare, run_once

from .conftest import write_profile

SEGMENT = 500  # payload: MSS 512 less the timestamp option
CLAMPED = 4096 // SEGMENT * SEGMENT  # 4000: the receiver offers whole segments


def transfer(tmp_path: Path, **transfer: str) -> dict[str, Any]:
    profile = write_profile(
        tmp_path,
        "ooo",
        """
description = "out-of-order test path: arq repairs 20 % frame loss"
[links.wired]
rate = "10mbit"
delay = "5ms"
[links.wireless]
rate = "1mbit"
delay = "20ms"
loss = "20%"
queue = 40
""",
    )
    data = {
        "description": "window clamp",
        "profile": str(profile),
        "duration": "10s",
        "schemes": ["arq"],
        "senders": ["reno-classic"],
        "transfer": {"mss": "512b", **transfer},
    }
    exp = parse_experiment("window-clamp", data, "test", Overrides())
    prepare(exp)
    ((scheme, sender),) = exp.cases
    record = run_once(exp, scheme, sender)
    assert record["error"] is None, record["error"]
    return record


def windows(record: dict[str, Any]) -> tuple[list[int], list[int]]:
    """The sender's snd_wnd and unacked samples once the transfer runs (after 1 s)."""
    samples = [s for s in record["series"]["ss"] if s["t"] >= 1.0 and "snd_wnd" in s]
    assert len(samples) >= 10, f"too few ss samples: {len(samples)}"
    return [s["snd_wnd"] for s in samples], [s.get("unacked", 0) for s in samples]


def test_clamp_gives_the_exact_advertised_window_where_window_does_not(tmp_path: Path) -> None:
    clamped = transfer(tmp_path, window_clamp="4KiB")
    buffered = transfer(tmp_path, window="4KiB")
    wnd, unacked = windows(clamped)
    plain_wnd, plain_unacked = windows(buffered)
    route = clamped["window_clamp"]["wh"]["route"]
    print(f"window_clamp: route {route!r}; snd_wnd {min(wnd)}-{max(wnd)}, unacked {min(unacked)}-{max(unacked)}, "
          f"{clamped['transfer']['goodput_mbps']:.3f} Mbit/s")  # fmt: skip
    print(f"window: snd_wnd {min(plain_wnd)}-{max(plain_wnd)}, unacked {min(plain_unacked)}-{max(plain_unacked)}, "
          f"{buffered['transfer']['goodput_mbps']:.3f} Mbit/s")  # fmt: skip
    assert max(wnd) == CLAMPED, wnd
    assert sum(w == CLAMPED for w in wnd) >= 0.8 * len(wnd), wnd
    assert max(unacked) <= CLAMPED // SEGMENT, unacked
    # The clamp went into arqd's table, not main, and autotuning is off at WH only.
    assert "table main" not in route and "window 4096" in route, route
    assert clamped["sysctls"]["wh"]["net.ipv4.tcp_moderate_rcvbuf"] == "0"
    assert clamped["sysctls"]["s"]["net.ipv4.tcp_moderate_rcvbuf"] == "1"
    # Without the clamp: no route, autotuning on, and out-of-order data shrinks the window.
    assert "window_clamp" not in buffered
    assert buffered["sysctls"]["wh"]["net.ipv4.tcp_moderate_rcvbuf"] == "1"
    below = sum(w < CLAMPED for w in plain_wnd)
    assert below >= 0.2 * len(plain_wnd), f"iperf3 -w 4096 kept the window at 8 segments: {plain_wnd}"
