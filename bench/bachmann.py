"""Bachmann's figures from the simulator: Table 1 (TCP stream and on-off in four rooms)
and the UDP rate fallback of Fig. 19 (docs/simulator.md, "Signal, errors and rates").

    .venv/bin/python bench/bachmann.py [--airtrace PATH] [--seeds N] [--json]

(10 seeds by default: one room-16 run carries a few deep fades, and whether one falls
in a burst or a silence moves it by a third.)

Runs scenarios/bachmann_room.toml in each room with DBS's two patterns, and
scenarios/bachmann_walk.toml; prints each figure beside the paper's. Throughput is the
study's "while transferring": for the stream, bytes over the run; for on-off, each
burst's bytes over the time from its first write to its last byte's arrival, summed
over the bursts (the silences are not the connection's to use).
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
from airtrace.bundlefiles import epoch_ns as bundle_epoch_ns  # noqa: E402
from airtrace.pcapio import ip_offset, read_records  # noqa: E402

# Room, the mobile node's place, the paper's SIR (dB), stream and on-off Mbit/s.
ROOMS = [
    (23, (0.0, 5.75), 37, 1.2463, 1.2279),
    (14, (5.75, 0.0), 33, 1.2290, 1.2364),
    (15, (8.42, 0.0), 18, 1.1998, 1.2348),
    (16, (11.5, 0.0), 4, 0.6377, 1.0334),
]
ON_S, OFF_S = 0.5, 1.5
ONOFF = [
    'flow[1].app="onoff"',
    f'flow[1].on="{int(ON_S * 1000)} ms"',
    f'flow[1].off="{int(OFF_S * 1000)} ms"',
]
# The study's delivered UDP throughput per rate regime, Mbit/s.
WALK = {11_000_000: 5.5, 5_500_000: 2.8, 2_000_000: 1.4, 1_000_000: 0.7}
MN = "198.18.0.3"


def simulate(airtrace: list[str], scenario: str, out: Path, sets: list[str]) -> None:
    cmd = [*airtrace, "simulate", str(ROOT / "scenarios" / scenario), "--out", str(out), "--no-progress"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def deliveries(pcap: Path, proto: int) -> list[tuple[int, int]]:
    """(capture time ns, new payload bytes) of the packets of `proto` arriving for the
    mobile node; for TCP only the bytes above the highest sequence number so far (a
    retransmitted copy brings nothing new)."""
    out: list[tuple[int, int]] = []
    top: int | None = None
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
            out.append((rec.ts_ns, total - ihl - 8))
            continue
        payload = total - ihl - (ip[ihl + 12] >> 4) * 4
        end = (struct.unpack("!I", ip[ihl + 4 : ihl + 8])[0] + payload) % 2**32
        top = end if top is None else top
        new = (end - top) % 2**32
        if 0 < new < 2**31:
            out.append((rec.ts_ns, new))
            top = end
    return out


def epoch_ns(bundle: Path) -> int:
    return bundle_epoch_ns(bundle, json.loads((bundle / "meta.json").read_text()))


def room_throughput(bundle: Path, onoff: bool, duration_s: float) -> float:
    """Mbit/s while transferring (see the module documentation)."""
    base = epoch_ns(bundle)
    got = [((t - base) / 1e9, n) for t, n in deliveries(bundle / "mn.pcap", 6) if n > 0]
    if not onoff:
        return sum(n for _, n in got) * 8 / duration_s / 1e6
    period = ON_S + OFF_S
    bursts: dict[int, list[tuple[float, int]]] = {}
    for t, n in got:
        bursts.setdefault(int(t // period), []).append((t, n))
    busy = sum(max(t for t, _ in got_k) - k * period for k, got_k in bursts.items())
    return sum(n for _, n in got) * 8 / busy / 1e6 if busy > 0 else 0.0


def walk_regimes(bundle: Path) -> dict[int, float]:
    """Delivered Mbit/s per rate regime: 1 s windows, each in the rate the access point
    used longest in it."""
    base = epoch_ns(bundle)
    changes = [(0.0, 11_000_000)]
    for line in (bundle / "link.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["kind"] == "rate_changed" and r["node"] == "ap":
            changes.append((r["t_ns"] / 1e9, r["rate_bps"]))
    got = [((t - base) / 1e9, n) for t, n in deliveries(bundle / "mn.pcap", 17)]
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


def figures(
    airtrace: list[str],
    seeds: int = 1,
    rooms: set[int] | None = None,
    walk: bool = True,
    duration: str = "120 s",
    sets: list[str] | None = None,
) -> dict[str, float]:
    """The figures by name (Mbit/s): each room's stream and on-off throughput, the mean
    over `seeds` seeds, and with `walk` the UDP throughput of each rate regime."""
    duration_s = float(duration.split()[0])
    out_figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for room, (x, y), _, _, _ in ROOMS:
            if rooms is not None and room not in rooms:
                continue
            for pattern, extra in (("stream", []), ("on-off", ONOFF)):
                vals = []
                for seed in range(1, seeds + 1):
                    out = Path(tmp) / f"r{room}-{pattern}-{seed}"
                    run_sets = [
                        f"seed={seed}",
                        f'duration="{duration}"',
                        f"network.node[3].x={x}",
                        f"network.node[3].y={y}",
                        *extra,
                        *(sets or []),
                    ]
                    simulate(airtrace, "bachmann_room.toml", out, run_sets)
                    vals.append(room_throughput(out, pattern == "on-off", duration_s))
                out_figures[f"throughput, room {room}, {pattern}"] = sum(vals) / len(vals)
        if walk:
            out = Path(tmp) / "walk"
            simulate(airtrace, "bachmann_walk.toml", out, [])
            for rate, mbps in sorted(walk_regimes(out).items(), reverse=True):
                out_figures[f"udp throughput, {rate / 1e6:g} Mbit/s"] = mbps
    return out_figures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--airtrace", default=shutil.which("airtrace"), help="the airtrace program (default: on the PATH)")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--duration", default="120 s")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--rooms", default="23,14,15,16", help="which rooms (default: all)")
    ap.add_argument("--no-walk", action="store_true", help="rooms only")
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE for the room runs")
    args = ap.parse_args()
    airtrace = [args.airtrace] if args.airtrace else [sys.executable, "-m", "airtrace.cli"]
    rooms = {int(r) for r in args.rooms.split(",")}
    figures_ = figures(airtrace, args.seeds, rooms, not args.no_walk, args.duration, args.set)
    if args.json:
        print(json.dumps(figures_, indent=1))
        return 0
    paper = {f"throughput, room {r}, stream": s for r, _, _, s, _ in ROOMS}
    paper |= {f"throughput, room {r}, on-off": o for r, _, _, _, o in ROOMS}
    paper |= {f"udp throughput, {r / 1e6:g} Mbit/s": v for r, v in WALK.items()}
    for name, value in figures_.items():
        want = paper.get(name)
        rel = f"{(value / want - 1) * 100:+.0f} %" if want else ""
        print(f"{name:36} {value:6.3f}  paper {want if want else '-':>6}  {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
