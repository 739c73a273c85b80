"""proc.Background: output is collected however much there is and however the process ends."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from airtcp.errors import AirtcpError, CommandError
from airtcp.proc import Background, poll_until
from airtcp.runner import _capture_live

# Far more than a pipe holds (64 KiB): unread, the writer would block there.
BIG = 300_000
WRITER = (
    "import sys, time\n"
    f"sys.stdout.write('x' * {BIG}); sys.stdout.write('end'); sys.stdout.flush()\n"
    "sys.stderr.write('err'); sys.stderr.flush()\n"
    "open(sys.argv[1], 'w').close()\n"
    "time.sleep(float(sys.argv[2]))\n"
)


@pytest.mark.parametrize(
    ("linger_s", "how"),
    [
        (60.0, "stop"),  # a sampler: runs until stopped, its output must all be there
        (0.0, "wait"),  # exits on its own
        (0.0, "stop"),  # exited before stop was called
    ],
)
def test_output_past_a_pipe_s_capacity_is_kept(tmp_path: Path, linger_s: float, how: str) -> None:
    marker = tmp_path / "written"
    proc = Background([sys.executable, "-c", WRITER, str(marker), str(linger_s)], name="writer")
    try:
        # the marker comes after the big write: it appears only if the pipe was drained meanwhile
        poll_until("the writer to get past its output", lambda: True if marker.exists() else None, deadline_s=30)
    finally:
        if how == "stop":
            proc.stop()
        else:
            assert proc.wait(timeout=30) == 0
    assert len(proc.stdout) == BIG + 3 and proc.stdout.endswith("end")
    assert proc.stderr == "err"


def test_a_line_is_there_while_the_process_still_runs() -> None:
    """A daemon's one line ("ready") must not wait in the pipe for more output."""
    talker = "import time; print('ready', flush=True); time.sleep(60)"
    proc = Background([sys.executable, "-c", talker], name="talker")
    try:
        poll_until("the line", lambda: True if proc.stdout == "ready\n" else None, deadline_s=10)
        assert proc.running()
    finally:
        proc.stop()


def test_wait_past_its_timeout_stops_the_process_and_says_so() -> None:
    sleeper = "import time; print('started', flush=True); time.sleep(60)"
    proc = Background([sys.executable, "-c", sleeper], name="sleeper")
    began = time.monotonic()
    with pytest.raises(CommandError, match="sleeper timed out after 0.5 s"):
        proc.wait(timeout=0.5)
    assert not proc.running() and time.monotonic() - began < 20
    assert proc.stdout == "started\n"


def test_a_capture_that_exits_before_its_file_appears_fails_at_once(tmp_path: Path) -> None:
    gone = Background([sys.executable, "-c", "import sys; sys.exit(3)"], name="capture")
    gone.wait(timeout=10)
    with pytest.raises(AirtcpError, match=r"exited \(3\)"):
        _capture_live(gone, tmp_path / "never.pcap")
    live = Background([sys.executable, "-c", "import time; time.sleep(30)"], name="capture")
    try:
        assert _capture_live(live, tmp_path / "never.pcap") is None  # still starting
        (tmp_path / "never.pcap").touch()
        assert _capture_live(live, tmp_path / "never.pcap") is True
    finally:
        live.stop()
