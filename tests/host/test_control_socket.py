"""pepd's and arqd's control sockets: never on the packet path, root only (the running kernel, no VM).

A control client that is slow, or stuck, or many of them, must not delay a
single packet: the socket is served by a thread of its own, every exchange
is non-blocking and bounded in time, and the packet thread only renders a
snapshot between two packets when a whole request has arrived.  Before
that design, one client sending a byte every 150 ms stalled pepd's packet
loop for seconds (issue 15).  The socket is created mode 0600 and checks
each client's credentials: a user other than root gets EACCES, and one
that reaches the socket anyway (a mode loosened by hand) is refused.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess

from airtcp.daemons import query

from .daemon_paths import PEPD, SlowClients, arq_path, as_nobody, median_ms, pepd_path

# What a slow control client may add to the median round trip through pepd at most (issue 15:
# 10 ms; the host's round trip through pepd is about 0.1-0.3 ms, so a stall of any length shows).
ADDED_MS_MAX = 10.0


def test_slow_control_clients_do_not_delay_pepds_packets() -> None:
    with pepd_path() as path, path.pepd() as (_, sock):
        # 5 s each: longer than two of the server's 2-second client time limits, so that slow
        # clients are cut off and come back while packets flow (a few hundred round trips take
        # only a tenth of a second)
        quiet = path.round_trips(n=100_000, seconds=5.0)
        # more dribbling clients than the server keeps open, and two that ask and never read
        with SlowClients(sock, count=10, stalled=2) as clients:
            busy = path.round_trips(n=100_000, seconds=5.0)
        added = median_ms(busy) - median_ms(quiet)
        print(
            f"median round trip through pepd: {median_ms(quiet):.3f} ms quiet ({len(quiet)}), "
            f"{median_ms(busy):.3f} ms with slow control clients ({len(busy)}); {clients.connections} connections"
        )
        assert len(busy) >= len(quiet) / 4, f"{len(busy)} round trips with slow clients, {len(quiet)} without"
        assert added <= ADDED_MS_MAX, f"slow control clients added {added:.3f} ms to the median round trip"
        stats = json.loads(query(sock, "stats json 1"))
    control, packets = stats["control_socket"], stats["totals"]["packets"]
    print(f"control socket {control}; pepd saw {packets} packets")
    # the round trips went through pepd's queue, not past it
    assert packets >= len(quiet) + len(busy), (packets, len(quiet), len(busy))
    # the clients were there and were cut off at the time limit (or turned away: the server was full)
    assert control["timeouts"] >= 8 and control["busy"] >= 1, control


def connect_as_nobody(sock: str) -> str:
    """What user nobody gets connecting to SOCK: 'connected' or the errno's name."""
    return as_nobody(
        "import socket, errno\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "try:\n"
        f"    s.connect({sock!r}); print('connected')\n"
        "except OSError as e:\n"
        "    print(errno.errorcode[e.errno])\n"
    ).strip()


def test_pepds_control_socket_is_root_only() -> None:
    with pepd_path() as path, path.pepd() as (_, sock):
        mode = os.stat(sock).st_mode
        assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600, oct(mode)
        assert os.stat(os.path.dirname(sock)).st_mode & 0o005, "the test wants a directory others may enter"
        # not root: the kernel refuses the connection (EACCES) ...
        assert connect_as_nobody(sock) == "EACCES"
        done = subprocess.run(
            ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", str(PEPD), "stats",
             "--control-socket", sock], capture_output=True, text=True, check=False, timeout=30,
        )  # fmt: skip
        assert done.returncode == 1 and "Permission denied (root only)" in done.stderr, done.stderr
        # ... and should the socket's mode be loosened, pepd itself refuses by the client's credentials
        os.chmod(sock, 0o666)
        out = as_nobody(
            "import socket\n"
            f"s = socket.socket(socket.AF_UNIX); s.connect({sock!r})\n"
            "try:\n"
            "    s.sendall(b'stats json\\n')\n"
            "except BrokenPipeError:\n"
            "    pass  # refused at once: the answer is already in the queue\n"
            "print(s.recv(1000).decode())\n"
        )
        assert out.strip() == "error: permission denied"
        control = json.loads(query(sock, "stats json 1"))["control_socket"]
        assert control["refused"] == 1, control


def test_pepd_refuses_a_socket_directory_others_can_write() -> None:
    with pepd_path() as path:
        directory = os.path.join(path.tmp, "open")
        os.mkdir(directory)
        os.chmod(directory, 0o777)
        argv = [str(PEPD), "--wireless", "to-wh", "--rules", "none", "--control-socket", f"{directory}/p.sock"]
        done = subprocess.run(path.bs.argv(argv), capture_output=True, text=True, check=False, timeout=30)
        assert done.returncode == 1, done.stderr
        problem = f"{directory} is writable by others (mode 777)"
        assert done.stderr.strip() == f"pepd: control_socket = {directory}/p.sock: {problem}"


def test_slow_control_clients_do_not_delay_arqds_frames() -> None:
    with arq_path() as path:
        assert len(path.ping(20)) == 20, "arqd does not carry pings"
        quiet = path.ping(200)
        with SlowClients(path.socks["wh"], count=10, stalled=2), SlowClients(path.socks["bs"], count=10, stalled=2):
            busy = path.ping(200)
        control = path.stats("wh")["control_socket"]
    added = sorted(busy)[len(busy) // 2] - sorted(quiet)[len(quiet) // 2]
    print(f"median ping through arqd: quiet {sorted(quiet)[len(quiet) // 2]} ms, busy {sorted(busy)[len(busy) // 2]} "
          f"ms ({len(busy)} replies); control socket {control}")  # fmt: skip
    assert len(busy) >= 190, f"{len(busy)} of 200 pings answered with slow control clients"
    assert added <= ADDED_MS_MAX, f"slow control clients added {added:.3f} ms to the median ping"
    assert control["timeouts"] >= 8, control


def test_arqds_control_socket_is_root_only() -> None:
    with arq_path() as path:
        sock = path.socks["wh"]
        assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600
        assert connect_as_nobody(sock) == "EACCES"
        os.chmod(sock, 0o666)
        out = as_nobody(
            f"import socket\ns = socket.socket(socket.AF_UNIX); s.connect({sock!r})\n"
            "try:\n"
            "    s.sendall(b'ping\\n')\n"
            "except BrokenPipeError:\n"
            "    pass  # refused at once: the answer is already in the queue\n"
            "print(s.recv(100).decode())\n"
        )
        assert out.strip() == "error: permission denied"
        assert path.stats("wh")["control_socket"]["refused"] == 1
