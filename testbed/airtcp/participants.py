"""A run's traffic: participants built from the experiment's workload.

A participant is one part of a run's traffic (``Participant``): an
iperf3 bulk flow (``IperfFlow``: the transfer and the competing flow
alike), a group of concurrent flows (workload kind ``many``: iperf3
pairs started one after the other, ``FlowGroup``, or airtcp's own
sender and sink, which start every flow at once, ``BarrierFlows``), or a
closed loop of short flows (``ShortFlows``: kind ``short``, airtcp's own
client and server or lighttpd and curl).
runner.py takes every participant through the same steps.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from . import bulkflows, flowstats, iperf, ss
from .errors import AirtcpError, CommandError
from .experiment import Experiment, Flow
from .proc import Background, poll_until
from .scheme import Sender
from .topology import Topology
from .workload import Workload

# How long after the transfer iperf3 may take to exchange its results.
END_GRACE_S = 60.0
SERVER_END_S = 20.0  # how long the receiver may take to finish after its client did
END_EXCHANGE = (
    "iperf3's end-of-test exchange had not finished {waited}: goodput from the receiver's intervals within the transfer"
)
SHORTFLOW_SCRIPT = Path(__file__).with_name("shortflow.py")
BULKFLOWS_SCRIPT = Path(__file__).with_name("bulkflows.py")
CONNECT_TIMEOUT_S = 30.0  # every flow's handshake must be done by then (bulkflows.py's barrier)
SINK_DRAIN_S = 5.0  # how long the bulk-flow sink may take to see every flow close after the sender ended
FLOW_TIMEOUT_S = 60.0  # one short flow is given up after this long
# iperf3's report period for each of many concurrent flows: a coarser series
# keeps the result file small (16 flows x 2 outputs per run).
GROUP_INTERVAL_S = 1.0
TRANSFER_POLL_S = 0.1  # how often the receiver's sockets are read until every flow's transfer began


class Participant(Protocol):
    """One part of a run's traffic, taken through the run's steps in order.

    ``listen`` (with its receiver's settings) before the transfer starts,
    ``start`` when it does, ``finish`` by ``deadline``; ``stop`` at any
    time, idempotent, never raising; then ``collect`` writes what it
    measured into ``into``: the record's top level for the run's own
    transfer (``key`` None), ``record[key]`` for any other, raw output
    first so that it stays in the record when parsing fails.
    ``grace_s`` is how long after the run's duration it may still need.
    """

    @property
    def receiver(self) -> str: ...

    @property
    def key(self) -> str | None: ...

    @property
    def grace_s(self) -> float: ...

    def listen(self, topo: Topology) -> None: ...

    def start(self, topo: Topology, family: str) -> None: ...

    def finish(self, deadline: float) -> None: ...

    def stop(self) -> None: ...

    def collect(self, into: dict[str, Any], ss_samples: str | None) -> None: ...


def _listening(topo: Topology, ports: Sequence[int], role: str) -> bool | None:
    counts = ss.sockets_per_port(topo.host(role).run(["ss", "-Hltn"], check=False), ports, "LISTEN")
    return True if all(counts.values()) else None


def _up(topo: Topology, server: Background, port: int, role: str) -> bool | None:
    """True once ``server`` listens on ``port``; an error if it exited first."""
    if not server.running():
        raise AirtcpError(f"{server.name} exited ({server.popen.returncode}): {server.stderr.strip()[-300:]}")
    return _listening(topo, [port], role)


class IperfFlow:
    """An iperf3 bulk flow: a server on the receiver, a client on S."""

    grace_s = END_GRACE_S

    def __init__(self, flow: Flow, exp: Experiment, duration_s: float, interval_s: float = iperf.INTERVAL_S) -> None:
        self.flow = flow
        self.settings = iperf.TransferSettings(
            duration_s, flow.congestion_control, exp.mss, exp.window, flow.port, interval_s
        )
        self.duration_s = duration_s
        self.server: Background | None = None
        self.client: Background | None = None
        self.end_stuck: str | None = None  # how long the end exchange was waited for, if it never finished

    @property
    def receiver(self) -> str:
        return self.flow.receiver

    @property
    def key(self) -> str | None:
        return self.flow.key

    @property
    def name(self) -> str:
        return f"iperf3 server{self.flow.process_suffix}"

    def spawn_server(self, topo: Topology) -> None:
        if self.flow.receiver_sysctls:
            topo.host(self.receiver).set_sysctls(dict(self.flow.receiver_sysctls))
        self.server = topo.host(self.receiver).spawn(iperf.server_argv(self.settings), name=self.name)

    def listen(self, topo: Topology) -> None:
        self.spawn_server(topo)
        poll_until(
            f"the {self.name} to listen", lambda: _listening(topo, [self.settings.port], self.receiver), deadline_s=10
        )

    def start(self, topo: Topology, family: str) -> None:
        self.client = topo.host("s").spawn(
            iperf.client_argv(topo.address(self.receiver, family), self.settings),
            name=f"iperf3 client{self.flow.process_suffix}",
        )

    def finish(self, deadline: float) -> None:
        """Wait for the pair; note whether its end-of-test exchange was stuck."""
        assert self.client is not None and self.server is not None
        try:
            self.client.wait(timeout=max(1.0, deadline - time.monotonic()))
        except CommandError:
            # Only a timeout raises here.  iperf3's control connection
            # crosses the lossy hop too: at a high loss rate its last
            # messages may still be in retransmission.  The receiver's
            # counts say what the transfer delivered (salvage_transfer).
            self.end_stuck = f"{self.grace_s:g} s after the transfer"
            self.server.stop()  # SIGTERM: iperf3 prints what it has
            return
        try:
            self.server.wait(timeout=SERVER_END_S)
        except CommandError:
            # The sender is done, the receiver's side of the exchange is
            # not (its last messages lost on the hop): wait stopped it,
            # and it printed its intervals.
            self.end_stuck = f"{SERVER_END_S:g} s after the sender had"

    def stop(self) -> None:
        for proc in (self.server, self.client):
            if proc is not None:
                proc.stop()

    def collect(self, into: dict[str, Any], ss_samples: str | None) -> None:
        assert self.client is not None and self.server is not None
        into["raw"] = {}
        into["transfer"] = _transfer_of(
            self.client, self.server, self.end_stuck is not None, self.duration_s, into["raw"]
        )
        if self.end_stuck:
            into["end_exchange"] = END_EXCHANGE.format(waited=self.end_stuck)
        if ss_samples is not None:
            into["series"] = {"ss": ss.parse_samples(ss_samples, self.settings.port)}


def _transfer_of(
    client: Background, server: Background, end_stuck: bool, duration_s: float, raw: dict[str, Any]
) -> dict[str, Any]:
    """The parsed transfer of one iperf3 pair; fills ``raw`` with its output first."""
    raw.update(iperf3_client=client.stdout, iperf3_server=server.stdout)
    if client.stderr.strip():
        raw["iperf3_client_stderr"] = client.stderr
    if end_stuck:
        client_part = iperf.load_partial_json(client.stdout)
        server_part = iperf.load_partial_json(server.stdout)
        raw.update(iperf3_client=client_part or client.stdout, iperf3_server=server_part)
        return iperf.salvage_transfer(client_part, server_part, duration_s).to_json()
    client_json = iperf.load_json(client.stdout, "iperf3 client")
    server_json = iperf.load_json(server.stdout, "iperf3 server") if server.stdout.strip() else None
    raw.update(iperf3_client=client_json, iperf3_server=server_json)
    return iperf.parse_transfer(client_json, server_json).to_json()


class FlowGroup:
    """Concurrent iperf3 flows S -> WH (workload kind ``many``), each with its own congestion control.

    Started one right after the other (one process start apart); each
    flow's goodput is taken over the window in which all of them ran, from
    its receiver's per-interval byte counts, so that the first flow's head
    start and the last one's late finish do not count.
    """

    key = None
    receiver = "wh"
    grace_s = END_GRACE_S

    def __init__(self, flows: Sequence[Flow], senders: Sequence[Sender], exp: Experiment, duration_s: float) -> None:
        self.members = [IperfFlow(flow, exp, duration_s, GROUP_INTERVAL_S) for flow in flows]
        self.senders = list(senders)
        self.duration_s = duration_s
        self.offsets: list[float] = []
        self.started: list[float | None] = []

    def listen(self, topo: Topology) -> None:
        for member in self.members:
            member.spawn_server(topo)
        ports = [member.settings.port for member in self.members]
        poll_until(f"{len(ports)} iperf3 servers to listen", lambda: _listening(topo, ports, "wh"), deadline_s=30)

    def start(self, topo: Topology, family: str) -> None:
        began = time.monotonic()
        for member in self.members:
            self.offsets.append(round(time.monotonic() - began, 3))
            member.start(topo, family)
        self.started = self._await_transfers(topo, began)

    def _await_transfers(self, topo: Topology, began: float) -> list[float | None]:
        """When each flow's data connection came up (its transfer began), on
        the clock of the first launch; None for a flow not up within the
        duration.  Read from the receiver's sockets: iperf3's own start
        time has a resolution of one second."""
        ports = [member.settings.port for member in self.members]
        started: list[float | None] = [None] * len(ports)
        while None in started and time.monotonic() - began < self.duration_s:
            counts = ss.sockets_per_port(topo.host(self.receiver).run(["ss", "-Htn"], check=False), ports, "ESTAB")
            now = round(time.monotonic() - began, 3)
            for i, port in enumerate(ports):
                if started[i] is None and counts[port] >= 2:  # the control connection and the data stream
                    started[i] = now
            if None in started:
                time.sleep(TRANSFER_POLL_S)
        return started

    def finish(self, deadline: float) -> None:
        for member in self.members:
            member.finish(deadline)

    def stop(self) -> None:
        for member in self.members:
            member.stop()

    def collect(self, into: dict[str, Any], ss_samples: str | None) -> None:
        flows: list[dict[str, Any]] = []
        into["flows"] = flows
        failed = []
        for i, (member, sender) in enumerate(zip(self.members, self.senders, strict=True)):
            entry: dict[str, Any] = {
                "index": i + 1,
                "sender": sender.name,
                "congestion_control": member.flow.congestion_control,
                "port": member.settings.port,
                "launch_offset_s": self.offsets[i] if i < len(self.offsets) else None,
                "start_offset_s": self.started[i] if i < len(self.started) else None,
            }
            flows.append(entry)
            try:
                member.collect(entry, None)
            except AirtcpError as exc:
                entry["error"] = str(exc)
                failed.append(f"flow {i + 1}: {exc}")
            for key in ("iperf3_client", "iperf3_server"):
                data = entry.get("raw", {}).get(key)
                if isinstance(data, dict):
                    iperf.drop_duplicate_intervals(data)
        problem = flowstats.together_problem(self.started, self.duration_s)
        starts = [start for start in self.started if start is not None]
        window = flowstats.common_window(starts, self.duration_s) if len(starts) == len(flows) else None
        into["window_s"] = list(window) if window else None
        if window is not None:
            start, end = window
            for entry, offset in zip(flows, starts, strict=True):
                intervals = flowstats.receiver_intervals(entry.get("raw", {}).get("iperf3_server"))
                if intervals:
                    got = flowstats.bytes_within(intervals, start - offset, end - offset)
                    entry["window_goodput_mbps"] = got * 8 / (end - start) / 1e6
        if failed:
            raise AirtcpError("; ".join(failed))
        if problem is not None:
            raise AirtcpError(problem)


class BarrierFlows:
    """Concurrent bulk flows S -> WH that start together (workload kind
    ``many``, ``client = "airtcp"``): bulkflows.py's sink at WH, its sender
    at S, which connects every flow and starts writing on all of them
    once the last handshake is done (the release).  Every flow is counted
    over the same window, from the release for the duration, from the
    sink's per-bin byte counts (the processes share the runner's
    monotonic clock).  A flow that got nothing through in it counts 0: it
    was sending all along, so that is starvation, not a late start.
    """

    key = None
    receiver = "wh"
    grace_s = CONNECT_TIMEOUT_S + END_GRACE_S

    def __init__(self, exp: Experiment, senders: Sequence[Sender], duration_s: float) -> None:
        self.port = iperf.PORT
        self.senders = list(senders)
        self.mss = exp.mss
        self.window = exp.window
        self.family = "6" if exp.ipv6 else "4"
        self.duration_s = duration_s
        self.sink: Background | None = None
        self.sender: Background | None = None
        self.began = 0.0
        self.problems: list[str] = []
        self.sink_stopped = False

    def listen(self, topo: Topology) -> None:
        argv = [
            sys.executable, str(BULKFLOWS_SCRIPT), "sink", "--port", str(self.port), "--flows", str(len(self.senders)),
            "--family", self.family, "--deadline", f"{self.duration_s + self.grace_s:g}",
        ]  # fmt: skip
        if self.window is not None:
            argv += ["--window", str(self.window)]
        sink = self.sink = topo.host(self.receiver).spawn(argv, name="bulk-flow sink")
        poll_until(f"the {sink.name} to listen", lambda: _up(topo, sink, self.port, self.receiver), deadline_s=30)

    def start(self, topo: Topology, family: str) -> None:
        argv = [
            sys.executable, str(BULKFLOWS_SCRIPT), "send", "--address", topo.address(self.receiver, family),
            "--port", str(self.port), "--congestion", ",".join(s.congestion_control for s in self.senders),
            "--duration", f"{self.duration_s:g}", "--connect-timeout", f"{CONNECT_TIMEOUT_S:g}",
        ]  # fmt: skip
        if self.mss is not None:
            argv += ["--mss", str(self.mss)]
        if self.window is not None:
            argv += ["--window", str(self.window)]
        self.began = time.monotonic()
        self.sender = topo.host("s").spawn(argv, name="bulk-flow sender")

    def finish(self, deadline: float) -> None:
        assert self.sender is not None and self.sink is not None
        try:
            self.sender.wait(timeout=max(1.0, deadline - time.monotonic()))
        except CommandError:
            self.problems.append(f"the bulk-flow sender had not finished {self.grace_s:g} s after the duration")
        try:
            # The window ends when the sender stops writing: what the sink
            # still receives after that (queued data, the FINs; a starved
            # flow may not close for minutes) counts for nothing.
            self.sink.wait(timeout=SINK_DRAIN_S)
        except CommandError:
            self.sink_stopped = True  # stopped with SIGTERM: it printed its counts

    def stop(self) -> None:
        for proc in (self.sender, self.sink):
            if proc is not None:
                proc.stop()

    def collect(self, into: dict[str, Any], ss_samples: str | None) -> None:
        assert self.sender is not None and self.sink is not None
        raw: dict[str, Any] = {"sender": self.sender.stdout[-20000:], "sink": self.sink.stdout[-200000:]}
        into["raw"] = raw
        _keep_stderr(raw, sender=self.sender, sink=self.sink)
        sent = _one_json(self.sender.stdout, "bulk-flow sender")
        received = _one_json(self.sink.stdout, "bulk-flow sink")
        raw.update(sender=sent, sink=received)
        into["sink_stopped"] = self.sink_stopped
        if sent.get("error"):
            raise AirtcpError(f"bulk-flow sender: {sent['error']}")
        t0, bin_s = float(received["t0"]), float(received["bin_s"])
        released = round(float(sent["released"]) - self.began, 3)
        window = (released, released + self.duration_s)
        into["released_offset_s"] = released
        into["window_s"] = list(window)
        flows: list[dict[str, Any]] = []
        into["flows"] = flows
        sinks = bulkflows.join_flows(sent["flows"], received.get("flows", []))
        for i, (flow, sender, got) in enumerate(zip(sent["flows"], self.senders, sinks, strict=True)):
            got = got or {}  # the sink never saw it: nothing got through
            first = got.get("first_byte")
            intervals = bulkflows.intervals_of(got, t0, bin_s, self.began)
            flows.append(
                {
                    "index": i + 1,
                    "sender": sender.name,
                    "congestion_control": flow["congestion_control"],
                    "congestion_used": flow.get("congestion_used"),  # read back from the socket
                    "port": flow.get("local_port"),
                    "launch_offset_s": round(float(flow["connected"]) - self.began, 3),
                    "start_offset_s": None if first is None else round(float(first) - self.began, 3),
                    "sent_bytes": flow.get("sent_bytes"),
                    "received_bytes": got.get("bytes", 0),
                    "tcp_info": flow.get("tcp_info"),
                    "window_goodput_mbps": flowstats.bytes_within(intervals, *window) * 8 / self.duration_s / 1e6,
                }
            )
        if not any(entry["window_goodput_mbps"] for entry in flows):
            self.problems.append(f"no byte reached the sink within the {self.duration_s:g} s after the release")
        if self.problems:
            raise AirtcpError("; ".join(self.problems))


def _keep_stderr(raw: dict[str, Any], **procs: Background) -> None:
    """The tail of what each process wrote to stderr, under ``NAME_stderr``, if anything."""
    for name, proc in procs.items():
        if proc.stderr.strip():
            raw[f"{name}_stderr"] = proc.stderr[-4000:]


def _one_json(stdout: str, what: str) -> dict[str, Any]:
    records, _bad = parse_lines(stdout)
    if len(records) != 1:
        raise AirtcpError(f"{what}: expected one JSON object on stdout, got {len(records)}: {stdout.strip()[-300:]!r}")
    return records[0]


class ShortFlows:
    """A closed loop of short flows (workload kind ``short``): a server at S, the client at WH.

    The client (shortflow.py ``fetch``) reads S's counters through the
    server's pid, so it must belong to S's namespace (checked).
    """

    key = None
    receiver = "wh"  # where the data goes
    grace_s = FLOW_TIMEOUT_S + 30.0  # the last flow, then the wait for a quiet port

    def __init__(self, workload: Workload, duration_s: float, family: str) -> None:
        self.workload = workload
        self.duration_s = duration_s
        self.family = family
        self.server: Background | None = None
        self.client: Background | None = None
        self.workdir: Path | None = None
        self.timed_out = False
        self.server_log = ""

    @property
    def port(self) -> int:
        return self.workload.port

    def listen(self, topo: Topology) -> None:
        host = topo.host("s")
        if self.workload.client == "http":
            if shutil.which("lighttpd") is None:  # else "exec failed" from ip netns exec
                raise AirtcpError("command not found: lighttpd (run `make deps`)")
            self.workdir = Path(tempfile.mkdtemp(prefix="airtcp-http-"))
            config = write_http_site(self.workdir, self.workload.sizes, self.port, self.family)
            self.server = host.spawn(["lighttpd", "-D", "-f", str(config)], name="lighttpd")
        else:
            argv = [sys.executable, str(SHORTFLOW_SCRIPT), "serve", "--port", str(self.port), "--family", self.family]
            self.server = host.spawn(argv, name="short-flow server")
        server = self.server
        poll_until(f"the {server.name} to listen", lambda: _up(topo, server, self.port, "s"), deadline_s=30)
        if not same_namespace(server.popen.pid, host.name):
            raise AirtcpError(f"{server.name} (pid {server.popen.pid}) is not in namespace {host.name}")

    def start(self, topo: Topology, family: str) -> None:
        assert self.server is not None
        argv = [
            sys.executable, str(SHORTFLOW_SCRIPT), "fetch",
            "--address", topo.address("s", family), "--port", str(self.port),
            "--sizes", ",".join(str(size) for size in self.workload.sizes),
            "--duration", f"{self.duration_s:g}", "--peer-pid", str(self.server.popen.pid),
            "--client", self.workload.client, "--flow-timeout", f"{FLOW_TIMEOUT_S:g}",
        ]  # fmt: skip
        self.client = topo.host("wh").spawn(argv, name="short-flow client")

    def finish(self, deadline: float) -> None:
        assert self.client is not None and self.server is not None
        try:
            self.client.wait(timeout=max(1.0, deadline - time.monotonic()))
        except CommandError:
            self.timed_out = True
        if self.workload.client == "airtcp":
            # The server prints a connection's record once it has closed it:
            # give the last one a moment before stopping the server.
            flows = self.client.stdout.count("\n")
            server = self.server
            with contextlib.suppress(AirtcpError):
                poll_until("the server's last record", lambda: server.stdout.count("\n") >= flows or None, deadline_s=5)
        self.server.stop()
        if self.workdir is not None and (self.workdir / "error.log").is_file():
            self.server_log = (self.workdir / "error.log").read_text()[-4000:]

    def stop(self) -> None:
        for proc in (self.client, self.server):
            if proc is not None:
                proc.stop()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def collect(self, into: dict[str, Any], ss_samples: str | None) -> None:
        assert self.client is not None and self.server is not None
        raw: dict[str, Any] = {}
        into["raw"] = raw
        _keep_stderr(raw, client=self.client, server=self.server)
        if self.server_log:
            raw["lighttpd_log"] = self.server_log
        flows, bad = parse_lines(self.client.stdout)
        records, bad_server = parse_lines(self.server.stdout) if self.workload.client == "airtcp" else ([], [])
        if bad or bad_server:
            raw["unparsed"] = bad + bad_server
        join_server_records(flows, records)
        into["short_flows"] = {
            "client": self.workload.client,
            "sizes": list(self.workload.sizes),
            "duration_s": self.duration_s,
            "flows": [f for f in flows if "index" in f],
        }
        problems = [f["error"] for f in flows if "index" not in f and "error" in f]
        if self.timed_out:
            problems.append(f"the short-flow client had not finished {self.grace_s:g} s after the duration")
        elif self.client.popen.returncode:
            problems.append(f"the short-flow client exited with status {self.client.popen.returncode}")
        if problems or not any("fct_ms" in flow for flow in into["short_flows"]["flows"]):
            detail = "; ".join(problems) or "no flow completed"
            raise AirtcpError(f"short flows: {detail}{_last_line(self.client.stderr)}")


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return f" ({lines[-1]})" if lines else ""


def parse_lines(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """JSON lines as records, and the lines that were not JSON objects."""
    records, bad = [], []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            bad.append(line[:500])
            continue
        if isinstance(value, dict):
            records.append(value)
        else:
            bad.append(line[:500])
    return records, bad


def join_server_records(flows: list[dict[str, Any]], records: Sequence[dict[str, Any]]) -> None:
    """Give each flow the server's record of its connection (its TCP_INFO),
    matched by the client's port and the size; each record is used once."""
    unused = list(records)
    for flow in flows:
        for record in unused:
            if record.get("peer_port") == flow.get("local_port") and record.get("size") == flow.get("size"):
                flow["server"] = {k: v for k, v in record.items() if k not in ("peer_port", "size")}
                unused.remove(record)
                break


def same_namespace(pid: int, netns_name: str) -> bool:
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino == os.stat(f"/run/netns/{netns_name}").st_ino
    except OSError:
        return False


def write_http_site(directory: Path, sizes: Sequence[int], port: int, family: str) -> Path:
    """One file per size under ``directory``/www (named by its size in bytes) and
    a lighttpd configuration serving them, one request per connection."""
    www = directory / "www"
    www.mkdir()
    for size in sizes:
        with open(www / str(size), "wb") as handle:
            handle.truncate(size)  # zeros; sparse on tmpfs
    bind = '"[::]"' if family == "6" else '"0.0.0.0"'
    config = directory / "lighttpd.conf"
    config.write_text(
        "# written by airtcp for one run (Documentation/workloads.rst)\n"
        f'server.document-root = "{www}"\n'
        f"server.bind = {bind}\n"
        f"server.port = {port}\n"
        "server.max-keep-alive-requests = 0\n"  # a fresh connection per object
        f'server.errorlog = "{directory / "error.log"}"\n'
        'server.tag = "airtcp"\n'
    )
    return config


def participants(exp: Experiment, workload: Workload, sender: Sender) -> list[Participant]:
    """The run's traffic: the transfer first (it owns the record's top level), then the rest."""
    duration = exp.duration_for(workload)
    if workload.kind == "short":
        return [ShortFlows(workload, duration, "6" if exp.ipv6 else "4")]
    flows = exp.flows(sender, workload)
    if workload.kind == "many" and workload.client == "airtcp":
        return [BarrierFlows(exp, workload.flow_senders(sender), duration)]
    if workload.kind == "many":
        return [FlowGroup(flows, workload.flow_senders(sender), exp, duration)]
    return [IperfFlow(flow, exp, duration) for flow in flows]
