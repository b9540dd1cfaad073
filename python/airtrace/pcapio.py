"""A small pure-Python pcap/pcapng reader and pcap writer, for what the packets table
does not carry: payload hashes (to match packets across captures), SACK block edges
(for time/sequence graphs) and rewriting time stamps (clock tests).

Reads classic pcap (both byte orders, micro- and nanosecond), pcapng (SHB, IDB, EPB,
SPB, per-interface time resolution), gzip-compressed or not; decodes IPv4/IPv6 and TCP
over Ethernet (VLAN), raw IP, Linux cooked v1/v2 and BSD loopback. It is not fast
(about a microsecond per record in CPython): the analyzer in Rust does the heavy work.
"""

from __future__ import annotations

import gzip
import os
import struct
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Iterator

LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101


@dataclass
class Record:
    """One captured frame: time stamp (ns since the epoch), link type, bytes, wire length."""

    ts_ns: int
    linktype: int
    data: bytes
    orig_len: int


def _open(path: str | os.PathLike[str]) -> BinaryIO:
    f = open(path, "rb")
    if f.read(2) == b"\x1f\x8b":
        f.close()
        return gzip.open(path, "rb")  # type: ignore[return-value]
    f.seek(0)
    return f


def read_records(path: str | os.PathLike[str]) -> Iterator[Record]:
    """Every record of a pcap or pcapng file, in file order."""
    with _open(path) as f:
        magic = f.read(4)
        if magic == b"\x0a\x0d\x0d\x0a":
            yield from _read_pcapng(f, magic)
            return
        pcap_magics = {
            b"\xd4\xc3\xb2\xa1": ("<", 1000),
            b"\xa1\xb2\xc3\xd4": (">", 1000),
            b"\x4d\x3c\xb2\xa1": ("<", 1),
            b"\xa1\xb2\x3c\x4d": (">", 1),
        }
        if magic not in pcap_magics:
            raise ValueError(f"{os.fspath(path)}: not a pcap or pcapng file")
        endian, mult = pcap_magics[magic]
        head = f.read(20)
        linktype = struct.unpack(endian + "HHiIII", head)[5] & 0x0FFFFFFF
        rec = struct.Struct(endian + "IIII")
        while True:
            h = f.read(16)
            if len(h) < 16:
                return
            sec, frac, incl, orig = rec.unpack(h)
            data = f.read(incl)
            if len(data) < incl:
                return
            yield Record(sec * 1_000_000_000 + frac * mult, linktype, data, orig)


def _read_pcapng(f: BinaryIO, first: bytes) -> Iterator[Record]:
    endian = "<"
    ifaces: list[tuple[int, int]] = []  # (linktype, ticks per second)
    block_type_raw = first
    while True:
        if block_type_raw is None or len(block_type_raw) < 4:
            return
        if block_type_raw == b"\x0a\x0d\x0d\x0a":
            rest = f.read(8)
            endian = "<" if rest[4:8] == b"\x4d\x3c\x2b\x1a" else ">"
            total = struct.unpack(endian + "I", rest[:4])[0]
            f.read(total - 12)
            ifaces = []
        else:
            btype = struct.unpack(endian + "I", block_type_raw)[0]
            total = struct.unpack(endian + "I", f.read(4))[0]
            body = f.read(total - 8)
            if len(body) < total - 8:
                return
            body = body[:-4]
            if btype == 1:  # IDB
                linktype = struct.unpack(endian + "H", body[:2])[0]
                ifaces.append((linktype, _if_tsresol(body[8:], endian)))
            elif btype == 6:  # EPB
                iface, hi, lo, incl, orig = struct.unpack(endian + "IIIII", body[:20])
                linktype, tps = ifaces[iface]
                ticks = (hi << 32) | lo
                ts = ticks * 1_000_000_000 // tps
                yield Record(ts, linktype, body[20 : 20 + incl], orig)
            elif btype == 3:  # SPB
                orig = struct.unpack(endian + "I", body[:4])[0]
                linktype, _ = ifaces[0]
                yield Record(0, linktype, body[4 : 4 + orig], orig)
        block_type_raw = f.read(4)


def _if_tsresol(opts: bytes, endian: str) -> int:
    i = 0
    while i + 4 <= len(opts):
        code, length = struct.unpack(endian + "HH", opts[i : i + 4])
        if code == 0:
            break
        if code == 9 and length >= 1:
            v = opts[i + 4]
            return 2 ** (v & 0x7F) if v & 0x80 else 10 ** v
        i += 4 + ((length + 3) & ~3)
    return 1_000_000


def ip_offset(linktype: int, data: bytes) -> int | None:
    """Where the IP header starts in a frame of this link type, or None."""
    if linktype in (LINKTYPE_RAW, 228, 229, 12, 14):
        return 0
    if linktype == LINKTYPE_ETHERNET:
        off, etype = 14, int.from_bytes(data[12:14], "big") if len(data) >= 14 else 0
        while etype in (0x8100, 0x88A8) and len(data) >= off + 4:
            etype = int.from_bytes(data[off + 2 : off + 4], "big")
            off += 4
        return off if etype in (0x0800, 0x86DD) else None
    if linktype == 113:
        return 16
    if linktype == 276:
        return 20
    if linktype == 0:
        return 4
    return None


@dataclass
class TcpInfo:
    """The fields of one TCP/IP packet that correlation and the plots use."""

    ip_src: str
    ip_dst: str
    ip_id: int
    src_port: int
    dst_port: int
    seq: int
    ack: int
    flags: int
    payload_len: int
    payload_crc: int
    sack: list[tuple[int, int]]


def decode_tcp(rec: Record) -> TcpInfo | None:
    """The TCP/IP fields of a record, or None when it is not TCP (or cut too short)."""
    d = rec.data
    off = ip_offset(rec.linktype, d)
    if off is None or len(d) < off + 20:
        return None
    version = d[off] >> 4
    if version == 4:
        ihl = (d[off] & 0x0F) * 4
        if d[off + 9] != 6 or int.from_bytes(d[off + 6 : off + 8], "big") & 0x1FFF:
            return None
        total = int.from_bytes(d[off + 2 : off + 4], "big")
        src, dst = ".".join(map(str, d[off + 12 : off + 16])), ".".join(map(str, d[off + 16 : off + 20]))
        ip_id = int.from_bytes(d[off + 4 : off + 6], "big")
        t = off + ihl
        ip_end = off + total
    elif version == 6:
        if d[off + 6] != 6 or len(d) < off + 40:
            return None
        import ipaddress

        src = str(ipaddress.IPv6Address(d[off + 8 : off + 24]))
        dst = str(ipaddress.IPv6Address(d[off + 24 : off + 40]))
        ip_id = 0
        t = off + 40
        ip_end = t + int.from_bytes(d[off + 4 : off + 6], "big")
    else:
        return None
    if len(d) < t + 20:
        return None
    sport, dport, seq, ack = struct.unpack(">HHII", d[t : t + 12])
    doff = (d[t + 12] >> 4) * 4
    flags = d[t + 13]
    sack: list[tuple[int, int]] = []
    i, end = t + 20, min(t + doff, len(d))
    while i < end:
        kind = d[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= end:
            break
        length = d[i + 1]
        if length < 2:
            break
        if kind == 5:
            for j in range(i + 2, i + length - 7, 8):
                sack.append(struct.unpack(">II", d[j : j + 8]))
        i += length
    payload = d[t + doff : min(ip_end, len(d))]
    plen = max(0, ip_end - t - doff)
    return TcpInfo(src, dst, ip_id, sport, dport, seq, ack, flags, plen, zlib.crc32(payload), sack)


def write_pcap(path: str | os.PathLike[str], records: list[Record] | Iterator[Record], linktype: int | None = None) -> None:
    """Write records as a classic nanosecond pcap (link type of the first record unless given)."""
    with open(path, "wb") as f:
        header_written = False
        for r in records:
            if not header_written:
                lt = r.linktype if linktype is None else linktype
                f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 262144, lt))
                header_written = True
            f.write(struct.pack("<IIII", r.ts_ns // 1_000_000_000, r.ts_ns % 1_000_000_000, len(r.data), r.orig_len))
            f.write(r.data)
        if not header_written:
            f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 262144, linktype or LINKTYPE_RAW))
