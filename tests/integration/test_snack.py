"""tcp_snack and tcp_snacks on a real kernel.

Receiver half: crafted out-of-order queues against a real socket
(tcpdrill.py), and the exact option bytes the kernel's ACKs then carry,
with the checksum checked with transmit checksum offload on (the ACK
crosses the veth with a partial sum: only the pseudo-header) and off (a
full sum).  Sender half: crafted ACKs into a real sending socket -
malformed, outside the send window, SCPS-form and good SNACKs - and the
retransmission a good one triggers before any timer could.  Then real
transfers: a peer without the sender half ignores the option, and both
modules are loaded and unloaded under iperf3 traffic with dmesg clean.
"""

from __future__ import annotations

import select
import socket
import struct
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from airtcp import kmod
from airtcp.paths import KMOD_DIR
from airtcp.plugins.snack import parse_stat
from airtcp.proc import Background, poll_until, run
from airtcp.topology import Topology

from .conftest import lossy_profile
from .tcpdrill import PACKET_OUTGOING, TCP_ACK, TCP_PSH, Connection, Drill, _csum, in_netns

MSS = 1000
SNACK = kmod.out_of_tree("tcp_snack")
SNACKS = kmod.out_of_tree("tcp_snacks")
BAD_KERNEL_LOG = ("WARNING", "BUG", "Oops", "general protection", "refcount_t", "list_del corruption",
                  "use-after-free", "unregister_netdevice: waiting", "stack-protector", "RIP:")  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def snack_loaded() -> Iterator[None]:
    loaded_before = kmod.is_loaded("tcp_snack")
    kmod.load(SNACK)
    yield
    if not loaded_before and kmod.is_loaded("tcp_snack"):
        subprocess.run(["rmmod", "tcp_snack"], check=True)


def stats(drill: Drill) -> dict[str, int]:
    with in_netns(drill.wh.name), open("/proc/net/stat/tcp_snack") as f:
        return parse_stat(f.read())


def seq(conn: Connection, index: int) -> int:
    """Sequence number of MSS-sized segment ``index`` of the driver."""
    return (conn.isn + 1 + MSS * index) & 0xFFFFFFFF


def send(conn: Connection, index: int) -> float:
    return conn._send(conn._frame(seq(conn, index), TCP_ACK | TCP_PSH, bytes(MSS)))


def frames(conn: Connection, duration: float) -> list[tuple[float, bytes, bytes]]:
    """(time, pseudo-header, TCP segment) of every frame the receiver sends."""
    raw = conn.drill.raw
    assert raw is not None
    got: list[tuple[float, bytes, bytes]] = []
    end = time.monotonic() + duration
    while (left := end - time.monotonic()) > 0:
        if not select.select([raw], [], [], left)[0]:
            continue
        frame, _anc, _flags, addr = raw.recvmsg(4096, 64)
        if addr[2] == PACKET_OUTGOING:
            continue
        ethertype = struct.unpack("!H", frame[12:14])[0]
        if ethertype == 0x0800 and conn.drill.family == "4" and frame[23] == socket.IPPROTO_TCP:
            ihl = (frame[14] & 0x0F) * 4
            tcp = frame[14 + ihl : 14 + struct.unpack("!H", frame[16:18])[0]]
            pseudo = frame[26:34] + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(tcp))
        elif ethertype == 0x86DD and conn.drill.family == "6" and frame[20] == socket.IPPROTO_TCP:
            tcp = frame[54 : 54 + struct.unpack("!H", frame[18:20])[0]]
            pseudo = frame[22:54] + struct.pack("!I3xB", len(tcp), socket.IPPROTO_TCP)
        else:
            continue
        if struct.unpack("!HH", tcp[:4]) == (5555, conn.sport):
            got.append((time.monotonic(), pseudo, tcp))
    return got


def options(tcp: bytes) -> bytes:
    return tcp[20 : (tcp[12] >> 4) * 4]


def option_kinds(opts: bytes) -> set[int]:
    """The kinds in a TCP option list (walked, not searched for bytes)."""
    kinds: set[int] = set()
    i = 0
    while i < len(opts):
        kinds.add(opts[i])
        if opts[i] == 0:
            break
        i += 1 if opts[i] == 1 else max(opts[i + 1], 2)
    return kinds


def block(conn: Connection, first: int, last: int) -> str:
    return f"{seq(conn, first):08x}{seq(conn, last + 1):08x}"


@pytest.mark.parametrize("offload", ["on", "off"])
@pytest.mark.parametrize("family", ["4", "6"])
def test_golden_options_from_the_out_of_order_queue(family: str, offload: str) -> None:
    """Segments 2, 4, 5 and 7 arrive with 1 missing: the four dupacks carry
    the kernel's SACK blocks and a SNACK of the whole queue each time."""
    with Drill(family, {"net.tcp_snack.receiver": 1, "net.tcp_snack.sack_policy": 1}) as drill:
        if offload == "off":
            drill.wh.run(["ethtool", "-K", "to-s", "tx", "off"])
        conn = drill.connect(sack=True)
        before = stats(drill)
        send(conn, 0)
        conn.wait_ack(seq(conn, 1))  # also sets the receiver's rcv_mss to 1000
        for i in (2, 4, 5, 7):
            send(conn, i)
            time.sleep(0.02)
        acks = [(p, t) for _, p, t in frames(conn, 0.3) if struct.unpack("!I", t[8:12])[0] == seq(conn, 1)]
        snack = "01fe0b534e03e8" + "00000001"  # NOP, kind 254, len 11, ExID "SN", unit 1000, hole 1 = 1 block
        want = [
            "0101050a" + block(conn, 2, 2) + snack + "7f",
            "01010512" + block(conn, 4, 4) + block(conn, 2, 2) + snack + "5f",
            "01010512" + block(conn, 4, 5) + block(conn, 2, 2) + snack + "4f",
            "0101051a" + block(conn, 7, 7) + block(conn, 4, 5) + block(conn, 2, 2) + snack + "4b",
        ]
        assert [options(t).hex() for _, t in acks] == want
        for pseudo, tcp in acks:
            if offload == "off":
                assert _csum(pseudo + tcp) == 0, "full checksum wrong"
            else:  # CHECKSUM_PARTIAL: the field holds the pseudo-header sum
                assert struct.unpack("!H", tcp[16:18])[0] == ~_csum(pseudo) & 0xFFFF
        delta = {k: v - before[k] for k, v in stats(drill).items()}
        assert delta["ooo_acks"] == 4 and delta["written"] == 4, delta
        # Filling the hole: no more out-of-order data, no more SNACK.
        send(conn, 1)
        send(conn, 3)
        send(conn, 6)
        after = [t for _, _, t in frames(conn, 0.3)]
        assert after and b"\xfe\x0b\x53\x4e" not in options(after[-1])
        conn.close()


@pytest.mark.parametrize("mode", [0, 1])
def test_a_connection_without_sack_gets_no_snack(mode: int) -> None:
    """Its sender could act on SNACK only as SACK blocks, which it ignores:
    the receiver steps aside (issue 18), the dupacks leave as TCP made
    them, and rx_no_sack counts them."""
    with Drill("4", {"net.tcp_snack.receiver": 1, "net.tcp_snack.mode": mode}) as drill:
        conn = drill.connect(sack=False)
        before = stats(drill)
        send(conn, 0)
        conn.wait_ack(seq(conn, 1))
        for i in (2, 4, 5, 7):
            send(conn, i)
            time.sleep(0.02)
        acks = [t for _, _, t in frames(conn, 0.3) if struct.unpack("!I", t[8:12])[0] == seq(conn, 1)]
        assert len(acks) == 4
        assert all(option_kinds(options(t)) <= {0, 1, 8} for t in acks), acks  # EOL, NOP, timestamps
        delta = {k: v - before[k] for k, v in stats(drill).items()}
        assert (delta["ooo_acks"], delta["rx_no_sack"], delta["written"]) == (4, 4, 0), delta
        conn.close()


QUEUE = 7
QUEUE_RULES = f"""
table inet airtcp_snack_queue {{
    chain output {{
        type filter hook output priority -600; policy accept;
        meta l4proto tcp queue num {QUEUE}
    }}
}}
"""


# The test programs of kmod/tests/ are built into the checkout: the guest's
# TMPDIR (/dev/shm) may not allow executing what is written there.
TEST_BUILD = KMOD_DIR / "build" / "tests"


@pytest.fixture(scope="module")
def nfq_accept() -> Path:
    """kmod/tests/nfq_accept.c, built here: an NFQUEUE consumer that accepts."""
    TEST_BUILD.mkdir(parents=True, exist_ok=True)
    binary = TEST_BUILD / "nfq_accept"
    source = str(KMOD_DIR / "tests" / "nfq_accept.c")
    run(["cc", "-O2", "-Wall", "-o", str(binary), source, "-lnetfilter_queue"])
    return binary


def ready(helper: Background, flag: Path) -> bool | None:
    """True once the helper has created flag (Background reads its stdout
    only in blocks, so a line it prints may come only at its exit)."""
    if flag.exists():
        return True
    assert helper.running(), helper.stderr
    return None


def test_acks_reinjected_after_an_output_queue_rule(nfq_accept: Path, tmp_path: Path) -> None:
    """An nft queue rule in OUTPUT at priority -600, before the receiver's
    hook (-500), hands every ACK to a userspace consumer; the hook then runs
    from nf_reinject() in the consumer's verdict call, where TCP's socket
    lock is not held.  The hook takes the socket's lock itself there
    (counted ``deferred``), so the ACKs still carry the right options.

    It never waits for that lock: the consumer may answer while the receive
    path that queued the ACK still holds it on the other CPU (under QEMU a
    vCPU can be descheduled there for milliseconds).  Such an ACK leaves as
    TCP made it and is counted ``busy``; anything else is a failure."""
    with Drill("4", {"net.tcp_snack.receiver": 1, "net.tcp_snack.sack_policy": 1}) as drill:
        flag = tmp_path / "nfq_accept.ready"
        consumer = drill.wh.spawn([str(nfq_accept), str(QUEUE), str(flag)], name="nfq_accept")
        try:
            poll_until("the NFQUEUE consumer", lambda: ready(consumer, flag), deadline_s=10)
            run(drill.wh.argv(["nft", "-f", "-"]), input_text=QUEUE_RULES)
            conn = drill.connect(sack=True)
            before = stats(drill)
            send(conn, 0)
            conn.wait_ack(seq(conn, 1))
            for i in (2, 4, 5, 7):
                send(conn, i)
                time.sleep(0.1)  # each ACK is back from the queue before the next segment
            acks = [t for _, _, t in frames(conn, 0.3) if struct.unpack("!I", t[8:12])[0] == seq(conn, 1)]
            delta = {k: v - before[k] for k, v in stats(drill).items()}
            conn.close()
        finally:
            consumer.stop()
    snack = "01fe0b534e03e8" + "00000001"
    as_tcp_made_them = [
        "0101050a" + block(conn, 2, 2),
        "01010512" + block(conn, 4, 4) + block(conn, 2, 2),
        "01010512" + block(conn, 4, 5) + block(conn, 2, 2),
        "0101051a" + block(conn, 7, 7) + block(conn, 4, 5) + block(conn, 2, 2),
    ]
    with_snack = [
        sack + snack + vector for sack, vector in zip(as_tcp_made_them, ("7f", "5f", "4f", "4b"), strict=True)
    ]
    got = [options(t).hex() for t in acks]
    assert len(got) == 4, got
    left_alone = sum(g == tcp for g, tcp in zip(got, as_tcp_made_them, strict=True))
    assert all(g in (tcp, snacked) for g, tcp, snacked in zip(got, as_tcp_made_them, with_snack, strict=True)), got
    assert (delta["ooo_acks"], delta["deferred"]) == (4, 4), delta
    assert (delta["written"], delta["busy"]) == (4 - left_alone, left_alone), delta
    assert delta["written"] >= 2, delta  # the lock is rarely busy: most ACKs get their option
    seen = int(consumer.stdout.split("packets")[-1])
    assert seen >= 6, consumer.stdout  # the handshake's and every ACK went through the queue


@pytest.mark.parametrize(
    ("knobs", "tail"),
    [
        ({"net.tcp_snack.mode": 1}, "0101051a{b7}{b45}{b2}0101150600000001"),  # SCPS-TP kind 21
        ({"net.tcp_snack.sack_policy": 2}, "01fe0b534e03e8000000014b"),  # SNACK alone
        ({"net.tcp_snack.max_vec": 0}, "0101051a{b7}{b45}{b2}0101fe0a534e03e800000001"),  # hole 1 only
    ],
)
def test_modes_and_policies(knobs: dict[str, object], tail: str) -> None:
    with Drill("4", {"net.tcp_snack.sack_policy": 1, **knobs, "net.tcp_snack.receiver": 1}) as drill:
        conn = drill.connect(sack=True)
        send(conn, 0)
        conn.wait_ack(seq(conn, 1))
        for i in (2, 4, 5, 7):
            send(conn, i)
            time.sleep(0.02)
        acks = [t for _, _, t in frames(conn, 0.3) if struct.unpack("!I", t[8:12])[0] == seq(conn, 1)]
        want = tail.format(b7=block(conn, 7, 7), b45=block(conn, 4, 5), b2=block(conn, 2, 2))
        assert options(acks[-1]).hex() == want
        conn.close()


def snack_ack(conn: Connection, option: bytes) -> float:
    """A pure ACK from the driver acknowledging nothing new, with ``option``."""
    return conn._send(conn._frame((conn.isn + 1) & 0xFFFFFFFF, TCP_ACK, options=b"\x01" + option))


def first_retransmission(conn: Connection, base: int, sent_at: float, wait: float) -> float | None:
    """When the receiver's socket sent ``base`` again (monotonic), if it did."""
    for t, _, tcp in frames(conn, wait):
        if struct.unpack("!I", tcp[4:8])[0] == base and len(tcp) > (tcp[12] >> 4) * 4 and t > sent_at:
            return t
    return None


@pytest.mark.parametrize("sender_half", [1, 0])
def test_sender_acts_only_on_believable_snacks(sender_half: int) -> None:
    """The wh socket sends three segments that the driver never acks.
    Malformed, off-window and SCPS SNACKs change nothing; a good one says
    segment 1 is held, which becomes a SACK block: the sender repairs
    segment 0 at once, long before its 200 ms minimum RTO.  Without the
    sender half the option is ignored and only the RTO repairs it."""
    with Drill("4", {"net.tcp_snack.sender": sender_half}) as drill:
        conn = drill.connect(sack=True)
        assert conn.accepted is not None
        base = conn.rcv_nxt
        data_at = time.monotonic()
        conn.accepted.send(bytes(3 * MSS))
        seen = frames(conn, 0.05)
        assert len([t for _, _, t in seen if len(t) > 20]) >= 3, "the wh socket sent less than 3 segments"
        before = stats(drill)
        snack_ack(conn, bytes.fromhex("fe0b534e0000000000017f"))  # unit 0: malformed
        snack_ack(conn, bytes.fromhex("fe0b534e03e8000000057f"))  # held beyond snd_nxt
        snack_ack(conn, bytes.fromhex("150600000001"))  # SCPS: nothing to act on
        good_at = snack_ack(conn, bytes.fromhex("fe0b534e03e8000000017f"))  # segment 1 held
        retrans = first_retransmission(conn, base, data_at, 0.6)
        delta = {k: v - before[k] for k, v in stats(drill).items()}
        if sender_half:
            assert delta["seen"] == 4 and delta["malformed"] == 1 and delta["scps_ignored"] == 1, delta
            assert delta["out_of_window"] == 1 and delta["acted"] == 1 and delta["sack_added"] == 1, delta
            assert retrans is not None and retrans - data_at < 0.18, (retrans, data_at, good_at)
        else:
            assert delta["seen"] == 0, delta
            assert retrans is None or retrans - data_at >= 0.2, (retrans, data_at)
        conn.close()


CC_PROBE = """
import errno, socket
s = socket.socket()
try:
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"snacks")
    print("ok")
except OSError as exc:
    print(errno.errorcode[exc.errno])
"""
ALLOWED_CC = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")


def unprivileged_pick() -> str:
    argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", CC_PROBE]
    return run(argv).strip()


@pytest.fixture(scope="module")
def unknown_opt() -> tuple[Path, Path]:
    """kmod/tests/unknown_opt.bpf.c and its loader, built here."""
    TEST_BUILD.mkdir(parents=True, exist_ok=True)
    obj, loader = TEST_BUILD / "unknown_opt.bpf.o", TEST_BUILD / "unknown_opt_load"
    arch = run(["gcc", "-dumpmachine"]).strip()
    source = KMOD_DIR / "tests"
    run(["clang", "-O2", "-g", "-target", "bpf", f"-I/usr/include/{arch}", "-c",
         str(source / "unknown_opt.bpf.c"), "-o", str(obj)])  # fmt: skip
    run(["cc", "-O2", "-o", str(loader), str(source / "unknown_opt_load.c"), "-lbpf"])
    return obj, loader


@pytest.fixture
def cgroup2(tmp_path: Path) -> Iterator[Path]:
    """The root of the cgroup v2 hierarchy (every process of the VM is in it)."""
    for line in Path("/proc/mounts").read_text().splitlines():
        fields = line.split()
        if fields[2] == "cgroup2":
            yield Path(fields[1])
            return
    mount = tmp_path / "cgroup2"
    mount.mkdir()
    run(["mount", "-t", "cgroup2", "none", str(mount)])
    try:
        yield mount
    finally:
        run(["umount", str(mount)])


def test_an_option_it_does_not_know_stays_where_tcp_put_it(
    unknown_opt: tuple[Path, Path], cgroup2: Path, tmp_path: Path
) -> None:
    """A sock_ops BPF program makes the receiver's own TCP write an
    experimental option (kind 253) into every ACK, standing in for TCP-AO,
    which Debian's kernels lack: the receiver half must not move or resize
    a list with an option it does not know, since it may sign the header.
    TCP asks the program for room only after the SACK blocks, and with
    timestamps and three blocks none is left: hence three holes at most."""
    obj, loader = unknown_opt
    flag = tmp_path / "unknown_opt.ready"
    attached = Background([str(loader), str(obj), str(cgroup2), str(flag)], name="unknown_opt_load")
    try:
        poll_until("the sock_ops program", lambda: ready(attached, flag), deadline_s=20)
        with Drill("4", {"net.tcp_snack.receiver": 1, "net.tcp_snack.sack_policy": 1}) as drill:
            conn = drill.connect(sack=True)
            before = stats(drill)
            send(conn, 0)
            conn.wait_ack(seq(conn, 1))
            for i in (2, 4, 5):  # ACKs with one, two and two SACK blocks
                send(conn, i)
                time.sleep(0.02)
            acks = [t for _, _, t in frames(conn, 0.3) if struct.unpack("!I", t[8:12])[0] == seq(conn, 1)]
            delta = {k: v - before[k] for k, v in stats(drill).items()}
            conn.close()
    finally:
        attached.stop()
    assert len(acks) == 3, acks
    for tcp in acks:
        assert bytes.fromhex("fd04a1c5") in options(tcp), options(tcp).hex()  # TCP wrote it ...
        assert b"\xfe\x0b\x53\x4e" not in options(tcp), options(tcp).hex()  # ... and no SNACK came
    assert (delta["ooo_acks"], delta["unknown_opt"], delta["written"]) == (3, 3, 0), delta


def test_an_unprivileged_socket_picks_snacks_only_once_allowed() -> None:
    """Not TCP_CONG_NON_RESTRICTED: without CAP_NET_ADMIN a socket may not
    pick it until the administrator lists it as allowed."""
    if kmod.is_loaded("tcp_snacks"):
        subprocess.run(["rmmod", "tcp_snacks"], check=True)  # a fresh registration: the flag as built
    kmod.load(SNACKS)
    before = ALLOWED_CC.read_text().strip()
    try:
        assert "snacks" not in before.split(), before
        assert unprivileged_pick() == "EPERM"
        ALLOWED_CC.write_text(f"{before} snacks\n")
        assert unprivileged_pick() == "ok"
    finally:
        ALLOWED_CC.write_text(before + "\n")
        subprocess.run(["rmmod", "tcp_snacks"], check=True, timeout=60)


LOSSY = lossy_profile("test_snack.py")


def ns_stats(ns: str) -> dict[str, int]:
    with in_netns(ns):
        return parse_stat(Path("/proc/net/stat/tcp_snack").read_text())


def knobs(ns: str, values: dict[str, int]) -> None:
    with in_netns(ns):
        for name, value in values.items():
            Path(f"/proc/sys/net/tcp_snack/{name}").write_text(str(value))


def iperf(topo: Topology, seconds: int, cc: str) -> tuple[Background, Background]:
    server = topo.host("wh").spawn(["iperf3", "-s", "-1"], name="iperf3 server")
    time.sleep(0.5)
    client = topo.host("s").spawn(
        ["iperf3", "-c", topo.address("wh"), "-t", str(seconds), "-C", cc], name="iperf3 client"
    )
    return server, client


def test_a_peer_without_the_sender_half_ignores_the_option() -> None:
    with Topology(LOSSY) as topo:
        wh, s = topo.host("wh"), topo.host("s")
        wh.set_sysctls({"net.ipv4.tcp_comp_sack_nr": 0, "net.tcp_snack.receiver": 1})
        server = wh.spawn(["iperf3", "-s", "-1"], name="iperf3 server")
        time.sleep(0.5)
        out = s.run(["iperf3", "-c", topo.address("wh"), "-t", "4", "-C", "reno"])
        server.stop()
        assert "receiver" in out
        rx = ns_stats(wh.name)
        tx = ns_stats(s.name)
        assert rx["written"] > 0, rx
        assert tx["seen"] == 0, tx  # the sender's half is off: its TCP skipped the option


def test_load_unload_under_traffic() -> None:
    """Both halves on, 8 rounds of insmod/rmmod under an iperf3 transfer
    over a lossy link (half with the halves switched off first), the last
    with the namespaces deleted while on; then SNACK-S: a transfer with
    `-C snacks`, its estimate in `ss -tin`, and rmmod once it is over."""
    if kmod.is_loaded("tcp_snack"):
        subprocess.run(["rmmod", "tcp_snack"], check=True)
    marker = f"airtcp-snack-load-test-{time.time_ns()}"
    Path("/dev/kmsg").write_text(marker + "\n")
    written = acted = 0
    with Topology(LOSSY) as topo:
        wh, s = topo.host("wh"), topo.host("s")
        wh.set_sysctls({"net.ipv4.tcp_comp_sack_nr": 0})
        server, client = iperf(topo, 60, "reno")
        try:
            for round_ in range(8):
                kmod.load(SNACK)
                # trim: SNACK on every ACK with data held, so the sender half acts
                # (with keep, the default, it rarely has room or news on this path)
                knobs(wh.name, {"sack_policy": 1, "receiver": 1})
                knobs(s.name, {"sender": 1})
                time.sleep(0.6)
                assert client.running(), f"round {round_}: the transfer died"
                written += ns_stats(wh.name)["written"]
                acted += ns_stats(s.name)["acted"]
                if round_ % 2 == 0:
                    knobs(wh.name, {"receiver": 0})
                    knobs(s.name, {"sender": 0})
                subprocess.run(["rmmod", "tcp_snack"], check=True, timeout=60)
            kmod.load(SNACK)
            knobs(wh.name, {"receiver": 1})
            knobs(s.name, {"sender": 1})
            time.sleep(0.5)
        finally:
            client.stop()
            server.stop()
    subprocess.run(["rmmod", "tcp_snack"], check=True, timeout=60)
    assert written > 0 and acted > 0, (written, acted)

    kmod.load(SNACKS)
    with Topology(LOSSY) as topo:
        server, client = iperf(topo, 6, "snacks")
        try:
            ss = ""
            deadline = time.monotonic() + 5
            while "bbr:(bw:" not in ss and time.monotonic() < deadline:
                time.sleep(0.5)
                ss = topo.host("s").run(["ss", "-tin"])
            assert "snacks" in ss and "bbr:(bw:" in ss, ss
        finally:
            client.wait(timeout=30)
            server.stop()
    subprocess.run(["rmmod", "tcp_snacks"], check=True, timeout=60)

    log = subprocess.run(["dmesg"], capture_output=True, text=True, check=True).stdout
    after = log[log.index(marker) :]
    bad = [line for line in after.splitlines() if any(word in line for word in BAD_KERNEL_LOG)]
    assert bad == [], "\n".join(bad)
