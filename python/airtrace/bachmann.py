"""Bachmann's WLAN testbed in the simulator: where its runs put the mobile node and what
they measure, for `airtrace reproduce bachmann` and bench/bachmann.py (issue 14,
docs/simulator.md "Signal, errors and rates").

Table 1 is scenarios/bachmann_room.toml with the mobile node in each room and DBS's two
patterns; Fig. 19 is scenarios/bachmann_walk.toml. Throughput is the study's "while
transferring": for the stream, bytes over the run; for on-off, each burst's bytes over
the time from its first write to its last byte's arrival, summed over the bursts (the
silences are not the connection's to use).
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from airtrace.bundlefiles import epoch_ns as _epoch_ns
from airtrace.pcapio import ip_offset, read_records


@dataclass(frozen=True)
class Room:
    """A room of Table 1: the mobile node's place there and what the study measured."""

    number: int
    #: Where the mobile node stands (m), the access point being at (0, 0).
    place: tuple[float, float]
    #: The study's signal-to-interference ratio, dB.
    sir_db: int
    #: Table 1's throughput of each pattern, Mbit/s.
    stream: float
    onoff: float

    def published(self, pattern: str) -> float:
        """Table 1's throughput of `pattern` ("stream" or "on-off") here, Mbit/s."""
        return self.stream if pattern == "stream" else self.onoff


#: Table 1's rooms, the places as scenarios/bachmann_room.toml's comment gives them.
ROOMS = (
    Room(23, (0.0, 5.75), 37, 1.2463, 1.2279),
    Room(14, (5.75, 0.0), 33, 1.2290, 1.2364),
    Room(15, (8.42, 0.0), 18, 1.1998, 1.2348),
    Room(16, (11.5, 0.0), 4, 0.6377, 1.0334),
)


def rooms(numbers: Iterable[int]) -> list[Room]:
    """The rooms of Table 1 with these numbers, in the table's order; ValueError for a
    number that is not in it."""
    wanted = set(numbers)
    unknown = wanted - {room.number for room in ROOMS}
    if unknown:
        known = ", ".join(str(room.number) for room in ROOMS)
        raise ValueError(f"no room {', '.join(map(str, sorted(unknown)))} in Bachmann's Table 1 (rooms: {known})")
    return [room for room in ROOMS if room.number in wanted]


#: DBS's traffic patterns.
PATTERNS = ("stream", "on-off")
#: The on-off pattern: seconds writing, seconds silent.
ON_S, OFF_S = 0.5, 1.5
#: The study's delivered UDP throughput per rate regime of the walk (Fig. 19), Mbit/s by bit/s.
WALK = {11_000_000: 5.5, 5_500_000: 2.8, 2_000_000: 1.4, 1_000_000: 0.7}
#: The mobile node's address in both scenarios.
MN = "198.18.0.3"


def room_figure(room: int, pattern: str) -> str:
    """The name of a room's throughput figure: "throughput, room 16, on-off"."""
    return f"throughput, room {room}, {pattern}"


def walk_figure(rate_bps: int) -> str:
    """The name of a rate regime's figure: "udp throughput, 5.5 Mbit/s"."""
    return f"udp throughput, {rate_bps / 1e6:g} Mbit/s"


def room_overrides(room: Room, pattern: str) -> tuple[str, ...]:
    """The `--set` overrides of scenarios/bachmann_room.toml that put the mobile node in
    `room` with `pattern` ("stream", the scenario's, or "on-off")."""
    place = (f"network.node[3].x={room.place[0]}", f"network.node[3].y={room.place[1]}")
    if pattern == "stream":
        return place
    return (*place, 'flow[1].app="onoff"', f'flow[1].on="{ON_S * 1000:.0f} ms"', f'flow[1].off="{OFF_S * 1000:.0f} ms"')


def deliveries(pcap: str | os.PathLike[str], proto: int) -> list[tuple[int, int]]:
    """(capture time ns, new payload bytes) of the packets of `proto` arriving for the
    mobile node; for TCP only the bytes above the highest sequence number so far (a
    retransmitted copy brings nothing new); for UDP each datagram when all its IPv4
    fragments are in (RFC 791 §3.2: one lost is the datagram lost)."""
    out: list[tuple[int, int]] = []
    top: int | None = None
    #: Fragmented datagrams by IP identification: payload bytes in, and the whole
    #: payload's length once the last fragment (MF clear) has come.
    partial: dict[int, tuple[int, int | None]] = {}
    for rec in read_records(pcap):
        off = ip_offset(rec.linktype, rec.data)
        if off is None or len(rec.data) < off + 20:
            continue
        ip = rec.data[off:]
        if ip[9] != proto or ".".join(map(str, ip[16:20])) != MN:
            continue
        ihl = (ip[0] & 15) * 4
        total = struct.unpack("!H", ip[2:4])[0]
        if proto != 6:
            ip_id, word = struct.unpack("!HH", ip[4:8])
            more, offset = bool(word & 0x2000), (word & 0x1FFF) * 8
            if not more and offset == 0:
                out.append((rec.ts_ns, total - ihl - 8))
                continue
            got, whole = partial.get(ip_id, (0, None))
            got += total - ihl
            whole = offset + total - ihl if not more else whole
            if whole is not None and got >= whole:
                partial.pop(ip_id, None)
                out.append((rec.ts_ns, whole - 8))
            else:
                partial[ip_id] = (got, whole)
            continue
        payload = total - ihl - (ip[ihl + 12] >> 4) * 4
        end = (struct.unpack("!I", ip[ihl + 4 : ihl + 8])[0] + payload) % 2**32
        top = end if top is None else top
        new = (end - top) % 2**32
        if 0 < new < 2**31:
            out.append((rec.ts_ns, new))
            top = end
    return out


def _arrivals(bundle: Path, proto: int) -> list[tuple[float, int]]:
    """(seconds into the run, new payload bytes) of `deliveries` in the mobile node's capture."""
    base = _epoch_ns(bundle, json.loads((bundle / "meta.json").read_text()))
    return [((t - base) / 1e9, n) for t, n in deliveries(bundle / "mn.pcap", proto)]


def room_throughput(bundle: str | os.PathLike[str], onoff: bool, duration_s: float) -> float:
    """Mbit/s while transferring (see the module documentation) in a room run's bundle."""
    got = [(t, n) for t, n in _arrivals(Path(bundle), 6) if n > 0]
    if not onoff:
        return sum(n for _, n in got) * 8 / duration_s / 1e6
    period = ON_S + OFF_S
    bursts: dict[int, list[tuple[float, int]]] = {}
    for t, n in got:
        bursts.setdefault(int(t // period), []).append((t, n))
    busy = sum(max(t for t, _ in got_k) - k * period for k, got_k in bursts.items())
    return sum(n for _, n in got) * 8 / busy / 1e6 if busy > 0 else 0.0


def walk_regimes(bundle: str | os.PathLike[str]) -> dict[int, float]:
    """Delivered Mbit/s per rate regime of a walk's bundle: 1 s windows, each in the rate
    the access point used longest in it."""
    bundle = Path(bundle)
    changes = [(0.0, 11_000_000)]
    for line in (bundle / "link.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["kind"] == "rate_changed" and r["node"] == "ap":
            changes.append((r["t_ns"] / 1e9, r["rate_bps"]))
    got = _arrivals(bundle, 17)
    end = int(max(t for t, _ in got)) if got else 0
    per: dict[int, list[float]] = {}
    for w in range(2, end):  # the walk starts at 1 s
        time_at: dict[int, float] = {}
        for i, (t, rate) in enumerate(changes):
            nxt = changes[i + 1][0] if i + 1 < len(changes) else float("inf")
            overlap = min(nxt, w + 1) - max(t, w)
            if overlap > 0:
                time_at[rate] = time_at.get(rate, 0.0) + overlap
        rate = max(time_at, key=lambda r: time_at[r])
        bits = sum(n for t, n in got if w <= t < w + 1) * 8
        per.setdefault(rate, []).append(bits / 1e6)
    return {r: sum(v) / len(v) for r, v in per.items()}
