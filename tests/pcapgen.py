"""Build small captures with known truth for tests: Ethernet or radiotap/802.11
frames carrying IPv4/TCP, written as classic pcap (microsecond timestamps)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

SYN, ACK, FIN, RST, PSH = 0x02, 0x10, 0x01, 0x04, 0x08


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4_tcp(src: str, dst: str, sport: int, dport: int, seq: int, ack: int, flags: int, *,
             payload: bytes = b"", window: int = 65535, ip_id: int = 0, options: bytes = b"") -> bytes:
    """An IPv4 packet carrying one TCP segment, with correct checksums (RFC 791, RFC 9293)."""
    options += b"\0" * (-len(options) % 4)
    saddr = bytes(int(x) for x in src.split("."))
    daddr = bytes(int(x) for x in dst.split("."))
    offset = (20 + len(options)) // 4
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, offset << 4, flags, window, 0, 0)
    tcp += options + payload
    pseudo = saddr + daddr + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", _checksum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), ip_id & 0xFFFF, 0x4000, 64, 6, 0, saddr, daddr)
    ip = ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:]
    return ip + tcp


def ethernet(ip_packet: bytes) -> bytes:
    return b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00" + ip_packet


def radiotap_wlan(
    ip_packet: bytes, *, seq: int, retry: bool, transmitter: bytes, receiver: bytes, rate_500kbps: int = 22
) -> bytes:
    """A radiotap header (flags and rate, 11 Mb/s unless told) and an 802.11 data frame with LLC/SNAP."""
    radiotap = struct.pack("<BBHI", 0, 0, 10, 0b110) + bytes([0x00, rate_500kbps])
    fc = 0x0008 | (0x0800 if retry else 0) | 0x0100  # data frame, to-DS, retry bit
    header = struct.pack("<HH", fc, 0) + receiver + transmitter + receiver + struct.pack("<H", seq << 4)
    llc = b"\xaa\xaa\x03\0\0\0\x08\x00"
    return radiotap + header + llc + ip_packet


@dataclass
class Capture:
    linktype: int = 1
    frames: list[tuple[float, bytes]] = field(default_factory=list)

    def add(self, t: float, frame: bytes) -> None:
        self.frames.append((t, frame))

    def write(self, path: Path) -> Path:
        out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, self.linktype))
        for t, frame in self.frames:
            sec = int(t)
            usec = round((t - sec) * 1e6)
            out += struct.pack("<IIII", 1_700_000_000 + sec, usec, len(frame), len(frame)) + frame
        path.write_bytes(bytes(out))
        return path


@dataclass
class TcpConversation:
    """One TCP connection's Ethernet frames between a client and a server, in a Capture."""

    client: tuple[str, int] = ("198.18.0.1", 40000)
    server: tuple[str, int] = ("198.18.1.1", 80)
    capture: Capture = field(default_factory=Capture)

    def seg(self, t: float, from_client: bool, seq: int, ack: int, flags: int, n: int = 0) -> None:
        """A segment at `t` with `n` payload bytes, from the client or from the server."""
        (src, sport), (dst, dport) = (self.client, self.server) if from_client else (self.server, self.client)
        self.capture.add(t, ethernet(ipv4_tcp(src, dst, sport, dport, seq, ack, flags, payload=b"x" * n)))
