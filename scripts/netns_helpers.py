#!/usr/bin/env python3
"""Small helpers that scripts/make_sample_capture.sh runs *inside* network namespaces.

Subcommands (Python 3.11 stdlib only):

  relay      transparent layer-2 delay line between two interfaces (AF_PACKET).
             The kernel has no netem, so this is how the sample link gets its
             propagation delay.  Frames are forwarded unchanged (after fixing the
             IPv4 TCP/UDP checksum that veth checksum offload leaves partial) and
             written with an ordinary packet socket, so they pass through the
             egress qdisc (rate limit, buffer, random loss) of the outgoing device.
             SIGUSR1 starts a link-layer stall: nothing crosses for --stall-seconds,
             nothing is lost.
  bulk-recv  accepts one connection, reads until EOF, closes (the receiving application).
  bulk-send  connects, sends N bytes, half-closes and waits for the peer to close.
             (iperf3 -n is not used for the sample: its server closes the data socket
             while data is still in flight, which ends the capture with a burst of RSTs.)
  rr-server  tiny request/response server: reads "GET <bytes>\\n", answers that many bytes.
  rr-client  makes COUNT short connections to rr-server, one request each.

This file is only ever run by make_sample_capture.sh with addresses from
198.18.0.0/15 inside namespaces that the script created.
"""

from __future__ import annotations

import argparse
import heapq
import ipaddress
import os
import select
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
ALLOWED_NET = ipaddress.ip_network("198.18.0.0/15")


def _set_cc(sock: socket.socket, cc: str | None) -> None:
    """Per-socket congestion control (root may pick any available one; the
    per-namespace sysctl only accepts tcp_allowed_congestion_control)."""
    if cc:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())


def _check_addr(addr: str) -> None:
    if ipaddress.ip_address(addr) not in ALLOWED_NET:
        sys.exit(f"refusing address {addr}: only 198.18.0.0/15 is allowed")


# ----------------------------------------------------------------------------- relay
def _csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def _fix_l4_checksum(frame: bytes) -> bytes:
    """Recompute the TCP/UDP checksum of an untagged Ethernet/IPv4 frame.

    Packets that leave a veth with checksum offload carry only the pseudo-header
    sum; forwarded through a packet socket they would be dropped by the receiver.
    """
    if len(frame) < 34 or frame[12:14] != b"\x08\x00":
        return frame
    ihl = (frame[14] & 0x0F) * 4
    total = struct.unpack_from("!H", frame, 16)[0]
    proto = frame[23]
    frag = struct.unpack_from("!H", frame, 20)[0]
    if frag & 0x3FFF or proto not in (6, 17):  # fragments: leave alone
        return frame
    l4_off = 14 + ihl
    l4_len = total - ihl
    if l4_len <= 0 or l4_off + l4_len > len(frame):
        return frame
    ck_off = l4_off + (16 if proto == 6 else 6)
    if ck_off + 2 > l4_off + l4_len:
        return frame
    buf = bytearray(frame)
    buf[ck_off:ck_off + 2] = b"\0\0"
    pseudo = bytes(buf[26:34]) + struct.pack("!BBH", 0, proto, l4_len)
    ck = _csum(pseudo + bytes(buf[l4_off:l4_off + l4_len]))
    if proto == 17 and ck == 0:
        ck = 0xFFFF
    struct.pack_into("!H", buf, ck_off, ck)
    return bytes(buf)


def cmd_relay(args: argparse.Namespace) -> int:
    delay = args.delay_ms / 1000.0
    socks = {}
    for name in (args.a, args.b):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.bind((name, 0))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        # frames waiting in the egress qdisc stay charged to this socket
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
        s.setblocking(False)
        socks[name] = s
    other = {args.a: socks[args.b], args.b: socks[args.a]}
    by_fd = {s.fileno(): name for name, s in socks.items()}
    heap: list[tuple[float, int, socket.socket, bytes]] = []
    seq = 0
    stats = {"forwarded": 0, "qdisc_drops": 0, "max_frame": 0}
    stop = False
    stall_until = 0.0

    def _stop(*_: object) -> None:
        nonlocal stop
        stop = True

    def _stall(*_: object) -> None:
        # link-layer stall (ARQ retrying through a fade): nothing crosses the hop for
        # --stall-seconds, nothing is lost; held frames leave together afterwards.
        nonlocal stall_until
        stall_until = time.monotonic() + args.stall_seconds

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGUSR1, _stall)
    if args.ready_file:
        with open(args.ready_file, "w") as f:
            f.write(f"{os.getpid()}\n")
    while not stop:
        now = time.monotonic()
        stalled = now < stall_until
        while heap and heap[0][0] <= now and not stalled:
            _, _, out, frame = heapq.heappop(heap)
            try:
                out.send(frame)
                stats["forwarded"] += 1
            except OSError:  # ENOBUFS: the egress qdisc dropped it (queue full / loss)
                stats["qdisc_drops"] += 1
        if stalled:
            timeout = min(0.5, stall_until - time.monotonic())
        else:
            timeout = max(0.0, heap[0][0] - time.monotonic()) if heap else 0.5
        timeout = max(0.0, timeout)
        try:
            ready, _, _ = select.select(list(socks.values()), [], [], timeout)
        except InterruptedError:
            continue
        now = time.monotonic()
        for s in ready:
            name = by_fd[s.fileno()]
            while True:
                try:
                    frame, addr = s.recvfrom(65536)
                except BlockingIOError:
                    break
                if addr[2] == PACKET_OUTGOING:  # our own transmissions
                    continue
                stats["max_frame"] = max(stats["max_frame"], len(frame))
                seq += 1
                heapq.heappush(heap, (now + delay, seq, other[name], _fix_l4_checksum(frame)))
    msg = (f"relay {args.a}<->{args.b}: forwarded {stats['forwarded']} frames, "
           f"{stats['qdisc_drops']} refused by the egress qdisc, largest frame "
           f"{stats['max_frame']} bytes, {len(heap)} still in the delay line")
    print(msg, flush=True)
    return 0


# ------------------------------------------------------------------------ bulk
def parse_size(text: str) -> int:
    mult = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper().removesuffix("B")
    unit = t[-1] if t and t[-1] in "KMG" else ""
    return int(float(t[:-1] if unit else t) * mult[unit])


def cmd_bulk_recv(args: argparse.Namespace) -> int:
    _check_addr(args.bind)
    srv = socket.create_server((args.bind, args.port))
    _set_cc(srv, args.cc)
    srv.settimeout(args.max_seconds)
    if args.ready_file:
        with open(args.ready_file, "w") as f:
            f.write(f"{os.getpid()}\n")
    conn, peer = srv.accept()
    _set_cc(conn, args.cc)
    srv.close()
    conn.settimeout(args.max_seconds)
    t0 = time.monotonic()
    got = 0
    with conn:
        while True:
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            got += len(chunk)
    dt = time.monotonic() - t0
    print(f"bulk-recv: {got} bytes from {peer[0]}:{peer[1]} in {dt:.2f} s "
          f"({got * 8 / dt / 1e6:.2f} Mbit/s goodput)", flush=True)
    return 0


def cmd_bulk_send(args: argparse.Namespace) -> int:
    _check_addr(args.server)
    n = parse_size(args.bytes)
    block = (b"airtrace-bulk-data " * 3450)[:1 << 16]
    t0 = time.monotonic()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as c:
        _set_cc(c, args.cc)
        c.settimeout(args.max_seconds)
        c.connect((args.server, args.port))
        cc = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
        left = n
        while left:
            sent = c.send(block[:min(left, len(block))])
            left -= sent
        c.shutdown(socket.SHUT_WR)
        while c.recv(4096):  # wait for the receiver to close: all data delivered
            pass
    dt = time.monotonic() - t0
    print(f"bulk-send: {n} bytes in {dt:.2f} s ({n * 8 / dt / 1e6:.2f} Mbit/s goodput, {cc})", flush=True)
    return 0


# ------------------------------------------------------------------ request/response
def cmd_rr_server(args: argparse.Namespace) -> int:
    _check_addr(args.bind)
    srv = socket.create_server((args.bind, args.port), reuse_port=False)
    _set_cc(srv, args.cc)
    srv.settimeout(1.0)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    served = 0
    deadline = time.monotonic() + args.max_seconds
    while time.monotonic() < deadline and (args.count <= 0 or served < args.count):
        try:
            conn, _ = srv.accept()
        except TimeoutError:
            continue
        with conn:
            _set_cc(conn, args.cc)
            conn.settimeout(30)
            req = b""
            while not req.endswith(b"\n") and len(req) < 256:
                chunk = conn.recv(256)
                if not chunk:
                    break
                req += chunk
            parts = req.split()
            n = int(parts[1]) if len(parts) == 2 and parts[0] == b"GET" else 0
            payload = (b"airtrace-sample " * (n // 16 + 1))[:n]
            conn.sendall(payload)
            try:
                conn.shutdown(socket.SHUT_WR)
                while conn.recv(4096):
                    pass
            except OSError:
                pass
        served += 1
    print(f"rr-server: served {served} requests", flush=True)
    return 0


def cmd_rr_client(args: argparse.Namespace) -> int:
    _check_addr(args.server)
    ok = 0
    for i in range(args.count):
        if i:
            time.sleep(args.gap)
        t0 = time.monotonic()
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as c:
                _set_cc(c, args.cc)
                c.settimeout(30)
                c.connect((args.server, args.port))
                c.sendall(f"GET {args.size}\n".encode())
                got = 0
                while True:
                    chunk = c.recv(65536)
                    if not chunk:
                        break
                    got += len(chunk)
            ok += got == args.size
            print(f"rr-client: request {i + 1}/{args.count}: {got} bytes in "
                  f"{time.monotonic() - t0:.3f} s", flush=True)
        except OSError as e:
            print(f"rr-client: request {i + 1} failed: {e}", flush=True)
    return 0 if ok == args.count else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("relay", help="layer-2 delay line between two interfaces")
    r.add_argument("--a", required=True, help="first interface")
    r.add_argument("--b", required=True, help="second interface")
    r.add_argument("--delay-ms", type=float, default=40.0, help="one-way delay (default 40)")
    r.add_argument("--stall-seconds", type=float, default=2.5,
                   help="on SIGUSR1, hold every frame (both directions) this long (default 2.5)")
    r.add_argument("--ready-file", help="written once the sockets are bound")
    br = sub.add_parser("bulk-recv", help="receive one bulk transfer")
    br.add_argument("--bind", required=True)
    br.add_argument("--port", type=int, default=5001)
    br.add_argument("--max-seconds", type=float, default=600)
    br.add_argument("--ready-file", help="written once listening")
    bs = sub.add_parser("bulk-send", help="send one bulk transfer")
    bs.add_argument("--server", required=True)
    bs.add_argument("--port", type=int, default=5001)
    bs.add_argument("--bytes", default="4M", help="size, e.g. 4M (default 4M)")
    bs.add_argument("--max-seconds", type=float, default=600)
    s = sub.add_parser("rr-server", help="request/response server")
    s.add_argument("--bind", required=True)
    s.add_argument("--port", type=int, default=8080)
    s.add_argument("--count", type=int, default=0, help="exit after this many requests (0: no limit)")
    s.add_argument("--max-seconds", type=float, default=300)
    c = sub.add_parser("rr-client", help="request/response client")
    c.add_argument("--server", required=True)
    c.add_argument("--port", type=int, default=8080)
    c.add_argument("--count", type=int, default=5)
    c.add_argument("--size", type=int, default=30000, help="response size in bytes")
    c.add_argument("--gap", type=float, default=3.0, help="seconds between requests")
    for sp in (br, bs, s, c):
        sp.add_argument("--cc", help="TCP congestion control for these sockets (default: the kernel's)")
    args = p.parse_args()
    return {"relay": cmd_relay, "bulk-recv": cmd_bulk_recv, "bulk-send": cmd_bulk_send,
            "rr-server": cmd_rr_server, "rr-client": cmd_rr_client}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
