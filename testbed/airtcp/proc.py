"""Run external commands as argv lists; failures raise with their output.

No shell strings: every command is an argv list, so values from profiles or
flags can never be re-parsed by a shell.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from typing import IO, TypeVar

from .errors import AirtcpError, CommandError

T = TypeVar("T")

VERBOSE = os.environ.get("AIRTCP_VERBOSE", "") not in ("", "0")
# How long to wait for a stopped process's pipes to reach end of file (a
# grandchild that kept them open must not hang the run).
DRAIN_JOIN_S = 5.0


def run(argv: Sequence[str], *, check: bool = True, timeout: float = 60.0, input_text: str | None = None) -> str:
    """Run argv to completion and return its stdout."""
    args = [str(a) for a in argv]
    if VERBOSE:
        print("+ " + " ".join(args), flush=True)
    try:
        done = subprocess.run(
            args,
            input=input_text,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=None if input_text is not None else subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise AirtcpError(f"command not found: {args[0]} (run `make deps`)") from None
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        raise CommandError(args, -1, out, err or f"timed out after {timeout:g} s") from None
    if check and done.returncode != 0:
        raise CommandError(args, done.returncode, done.stdout, done.stderr)
    return done.stdout


class Background:
    """A long-running process that is always reaped, even on Ctrl-C."""

    def __init__(self, argv: Sequence[str], *, name: str, stdin_pipe: bool = False) -> None:
        self.argv = [str(a) for a in argv]
        self.name = name
        if VERBOSE:
            print("+ & " + " ".join(self.argv), flush=True)
        try:
            # A new session so a Ctrl-C at the terminal reaches only us;
            # we stop children ourselves, in order.
            self.popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise AirtcpError(f"command not found: {self.argv[0]} (run `make deps`)") from None
        # Drained as it comes: a pipe left unread fills (64 KiB) and blocks the
        # process, which silently cut the ss sampler's series short on long runs.
        self._out: list[str] = []
        self._err: list[str] = []
        pipes = ((self.popen.stdout, self._out, "stdout"), (self.popen.stderr, self._err, "stderr"))
        self._drains = [
            threading.Thread(target=_drain, args=(pipe, chunks), name=f"{name} {what}", daemon=True)
            for pipe, chunks, what in pipes
        ]
        for thread in self._drains:
            thread.start()

    @property
    def stdout(self) -> str:
        """Everything the process wrote to stdout so far."""
        return "".join(self._out)

    @property
    def stderr(self) -> str:
        return "".join(self._err)

    def _join_drains(self) -> None:
        for thread in self._drains:
            thread.join(timeout=DRAIN_JOIN_S)

    def send(self, line: str) -> None:
        """Write one line to the process's stdin (spawned with stdin_pipe)."""
        assert self.popen.stdin is not None
        self.popen.stdin.write(line + "\n")
        self.popen.stdin.flush()

    def running(self) -> bool:
        return self.popen.poll() is None

    @property
    def pid(self) -> int:
        """Also its process group id: each is started in a session of its own."""
        return self.popen.pid

    def wait(self, timeout: float) -> int:
        """Wait for exit and collect output; raise CommandError on timeout."""
        if self.popen.stdin is not None and not self.popen.stdin.closed:
            self.popen.stdin.close()
        try:
            self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise CommandError(self.argv, -1, self.stdout, f"{self.name} timed out after {timeout:g} s") from None
        self._join_drains()
        return self.popen.returncode

    def stop(self, grace: float = 2.0) -> None:
        """SIGTERM the whole process group, SIGKILL after a grace period."""
        if self.popen.returncode is not None:
            self._join_drains()  # exited on its own: its output may still be in the pipes
            return
        for sig, wait_s in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.popen.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.popen.wait(timeout=wait_s)
                break
            except subprocess.TimeoutExpired:
                continue
        self.popen.wait(timeout=5.0)
        self._join_drains()
        if self.popen.stdin is not None and not self.popen.stdin.closed:
            self.popen.stdin.close()


def _drain(pipe: IO[str] | None, chunks: list[str]) -> None:
    """Read a pipe to its end into chunks (list.append is atomic under the GIL).

    Line by line: a text pipe's read(n) waits for n characters, so a
    daemon's one line ("ready", "CTRL-EVENT-CONNECTED") would sit in the
    pipe until thousands more came; readline returns each line as it comes.
    """
    if pipe is None:
        return
    with pipe:
        while chunk := pipe.readline():
            chunks.append(chunk)


def poll_until(what: str, probe: Callable[[], T | None], *, deadline_s: float, interval_s: float = 0.05) -> T:
    """Call probe until it returns a value other than None; raise at the deadline."""
    end = time.monotonic() + deadline_s
    while True:
        value = probe()
        if value is not None:
            return value
        if time.monotonic() >= end:
            raise AirtcpError(f"timed out after {deadline_s:g} s waiting for {what}")
        time.sleep(interval_s)
