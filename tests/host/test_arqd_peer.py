"""arqd takes frames from its peer only, and no single frame moves its receiver (the running kernel, no VM).

Three hosts on one Ethernet segment: the base station and the wireless host,
each running arqd bound to the other's address, and mallory.  mallory's
frames under its own address are dropped unread (foreign_frames); frames
under the peer's address, as any host on the segment can write them, with a
base far below the receiver's window (the shape of a sender's restart) or
far above it (a skip over frames never given up), or a sequence number a
window past their own base, are each dropped and counted and move nothing:
before issue 15 one such frame reset the receiver or made it skip.  The
link carries traffic before, between and after, every datagram intact.
"""

from __future__ import annotations

import json
import sys
import time

from airtcp.proc import poll_until

from .daemon_paths import ArqPath, arq_data_frame, arq_path

DATAGRAMS = r"""
import json, socket, sys, time, zlib
mode, n = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if mode == "send":
    for i in range(n):
        body = bytes((i * 7 + k) % 256 for k in range(400))
        s.sendto(i.to_bytes(4, "big") + zlib.crc32(body).to_bytes(4, "big") + body, ("10.78.8.2", 6100))
        time.sleep(0.002)
else:
    s.bind(("0.0.0.0", 6100)); s.settimeout(5)
    seen, bad = set(), 0
    try:
        while len(seen) < n:
            d = s.recv(2048)
            i, crc = int.from_bytes(d[:4], "big"), int.from_bytes(d[4:8], "big")
            if zlib.crc32(d[8:]) != crc:
                bad += 1
            seen.add(i)
    except socket.timeout:
        pass
    print(json.dumps({"received": len(seen), "corrupt": bad}))
"""


def exchange(path: ArqPath, n: int = 100) -> dict[str, int]:
    """n datagrams bs -> wh through both arqds; what the receiver got."""
    receiver = path.wh.spawn([sys.executable, "-c", DATAGRAMS, "recv", str(n)], name="datagram receiver")
    poll_until(
        "the datagram receiver",
        lambda: True if path.wh.run(["ss", "-Hlun", "sport = :6100"]).strip() else None,
        deadline_s=10,
    )
    path.bs.run([sys.executable, "-c", DATAGRAMS, "send", str(n)], timeout=60)
    assert receiver.wait(timeout=30) == 0, receiver.stderr
    got: dict[str, int] = json.loads(receiver.stdout.strip().splitlines()[-1])
    return got


def test_frames_from_others_and_single_forged_frames_move_nothing() -> None:
    """Forged payloads start with a byte that is no IP version: delivered, the TUN device would refuse them."""
    with arq_path() as path:
        assert exchange(path) == {"received": 100, "corrupt": 0}
        before = path.stats("wh")
        # 1. mallory under its own address: never read
        for seq in range(3):
            path.send_from_mallory(arq_data_frame(seq, seq, b"\xffmallory" * 10), path.mac["mallory"])
        # 2. under the base station's address, one frame of each kind (arqd numbers from a random
        #    start, so these bases lie far from the receiver's window but for a chance of 1 in a million)
        bs = path.mac["bs"]
        path.send_from_mallory(arq_data_frame(7, 5, b"\xffrestart" * 10), bs)
        path.send_from_mallory(arq_data_frame(0x7000_0000, 0x6FFF_FFF0, b"\xffskip..." * 10), bs)
        path.send_from_mallory(arq_data_frame(0x1000_0000, 0x0FFF_0000, b"\xffa lie.." * 10), bs)  # a window above
        time.sleep(0.5)
        middle = path.stats("wh")
        # the bridge learnt the base station's address on mallory's port: the link repairs what that cost
        assert exchange(path) == {"received": 100, "corrupt": 0}
        after = path.stats("wh")
    link, rx, was = middle["link"], middle["receiver"], before["receiver"]
    print(f"wh before: link {before['link']}\nrx {was}\nafter the forgeries: link {link}\nrx {rx}")
    assert link["foreign_frames"] - before["link"]["foreign_frames"] == 3, link
    assert rx["out_of_step"] - was["out_of_step"] >= 2, rx
    assert rx["inconsistent"] - was["inconsistent"] == 1, rx
    assert rx["resyncs"] == 0 and rx["holes_skipped"] == was["holes_skipped"], rx
    # nothing forged went up (the TUN device refuses a packet of no IP version, counted)
    assert link["tun_write_errors"] == before["link"]["tun_write_errors"] == 0, link
    assert after["receiver"]["resyncs"] == 0 and after["link"]["tun_write_errors"] == 0, after
