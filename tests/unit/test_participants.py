"""An iperf3 pair whose end-of-test exchange sticks: what the runner keeps (fake processes, real iperf3 output)."""

from __future__ import annotations

import pytest

from airtcp import participants
from airtcp.errors import CommandError
from tests.conftest import FIXTURES


class FakeProcess:
    """A Background stand-in: exits on time, or times out as Background.wait does (stopped, output kept)."""

    def __init__(self, stdout: str, hangs: bool = False) -> None:
        self.stdout = stdout
        self.stderr = ""
        self.hangs = hangs
        self.stopped = False

    def wait(self, timeout: float) -> int:
        if self.hangs:
            self.stopped = True
            raise CommandError(["iperf3"], -1, self.stdout, f"timed out after {timeout:g} s")
        return 0

    def stop(self) -> None:
        self.stopped = True


def _pair(client_hangs: bool, server_hangs: bool) -> participants.IperfFlow:
    pair = participants.IperfFlow.__new__(participants.IperfFlow)
    pair.duration_s = 10.0
    pair.end_stuck = None
    pair.client = FakeProcess((FIXTURES / "iperf3-client-tcp.json").read_text(), hangs=client_hangs)  # type: ignore[assignment]
    pair.server = FakeProcess((FIXTURES / "iperf3-server-interrupted.json").read_text(), hangs=server_hangs)  # type: ignore[assignment]
    return pair


@pytest.mark.parametrize(
    ("client_hangs", "server_hangs", "waited"),
    [
        (True, False, "60 s after the transfer"),  # the sender never heard the end
        (False, True, "20 s after the sender had"),  # the sender is done, the receiver is not
    ],
)
def test_a_stuck_end_exchange_keeps_the_receivers_count(client_hangs: bool, server_hangs: bool, waited: str) -> None:
    pair = _pair(client_hangs, server_hangs)
    pair.finish(deadline=0.0)
    assert pair.server is not None and pair.server.stopped  # interrupted: it printed its intervals
    record: dict[str, object] = {}
    pair.collect(record, None)
    assert waited in str(record["end_exchange"])
    transfer = record["transfer"]
    assert isinstance(transfer, dict) and transfer["goodput_mbps"] > 0 and transfer["received_bytes"] > 0


def test_a_pair_that_finishes_has_no_end_exchange_note() -> None:
    pair = _pair(False, False)
    pair.server = FakeProcess((FIXTURES / "iperf3-server-tcp.json").read_text())  # type: ignore[assignment]
    pair.finish(deadline=0.0)
    record: dict[str, object] = {}
    pair.collect(record, None)
    assert pair.end_stuck is None and "end_exchange" not in record
