"""Where the time goes in Holland & Vaidya's MANET at each mean speed: the measurement
behind docs/simulator.md's "the speed shape" table (issue 13).

    .venv/bin/python bench/manet_speed_profile.py [--patterns 20] [--speeds 10,30]
        [--jobs N] [--set KEY=VALUE]... [--json]

Runs scenarios/holland_vaidya_manet.toml (Reno, 300 s) for movement patterns 1 … N at
each speed with the link, route and TCP state logs on, reads each bundle and throws it
away, and prints per speed (and with --json per run):

- `kbit/s`: the flow's throughput over the run; `none s`: time the two ends had no path
  at all (the summary's shortest-path hop counts);
- `rto`: retransmission timeouts; `stall s`: time from the send that an RTO followed
  to the first new ACK after it (the timer's first wait plus every backed-off one);
  `bo`: the largest backoff exponent reached;
- `disc s`: time n0 or n1 spent discovering a route to the other (from a request sent
  without a route to the next route learned, or to the end of the run), summed over the
  two ends; `req`: propagating requests sent by the two ends;
- `brk`: link failures the MACs reported (every node); `err`: route errors the ends
  received; `salv`: packets salvaged;
- `cache`: replies sent from an intermediate node's cache; `stale`: of those, replies
  whose route held a link longer than the radio's 250 m range when the reply was sent;
  `stale_end`: routes the two ends learned that were already broken when learned;
- drops of the flow's packets by reason (link.jsonl).

Positions come from the bundle's mobility.jsonl (one line per leg), so a link is judged
as ns-2's God would judge it: up when the two nodes are within 250 m.
"""

from __future__ import annotations

import argparse
import bisect
import json
import math
import statistics
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from airtrace import reproduce, simulate, workers

#: The radio's reception range in the scenario (ns-2's WaveLAN thresholds), m.
RANGE_M = 250.0

#: The flow's two ends.
ENDS = ("n0", "n1")


class Positions:
    """Every node's position at any time, from a bundle's mobility.jsonl."""

    def __init__(self, path: Path) -> None:
        self.legs: dict[str, list[dict]] = defaultdict(list)
        for line in path.read_text().splitlines():
            leg = json.loads(line)
            self.legs[leg["node"]].append(leg)
        self.starts = {n: [leg["t_ns"] for leg in legs] for n, legs in self.legs.items()}

    def at(self, node: str, t_ns: int) -> tuple[float, float]:
        legs = self.legs[node]
        i = max(bisect.bisect_right(self.starts[node], t_ns) - 1, 0)
        leg = legs[i]
        x0, y0 = leg["x"], leg["y"]
        if t_ns <= leg["t_ns"] or leg["end_ns"] <= leg["t_ns"]:
            return x0, y0
        f = min(1.0, (t_ns - leg["t_ns"]) / (leg["end_ns"] - leg["t_ns"]))
        return x0 + (leg["towards_x"] - x0) * f, y0 + (leg["towards_y"] - y0) * f

    def broken(self, route: list[str], t_ns: int) -> bool:
        """Whether a link of `route` is longer than the range at `t_ns`."""
        places = [self.at(n, t_ns) for n in route]
        return any(math.dist(a, b) > RANGE_M for a, b in zip(places, places[1:]))


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def tcp_profile(records: list[dict], end_ns: int) -> dict:
    """Timeouts, the largest backoff and the time stalled in them, from tcpstate.jsonl."""
    stall_ns, rto, backoff = 0, 0, 0
    before = None
    episode_from = None
    for r in records:
        if r["flow"] != 0:
            continue
        backoff = max(backoff, r["backoff"])
        if r["phase"] == "loss" and (before is None or before["phase"] != "loss" or r["backoff"] > before["backoff"]):
            rto += 1
            if episode_from is None:
                episode_from = before["t_ns"] if before is not None else 0
        if r["phase"] != "loss" and episode_from is not None:
            stall_ns += r["t_ns"] - episode_from
            episode_from = None
        before = r
    if episode_from is not None:
        stall_ns += end_ns - episode_from
    return {"rto": rto, "stall_s": stall_ns / 1e9, "backoff": backoff}


def route_profile(routes: list[dict], pos: Positions, end_ns: int) -> dict:
    """Discovery time and requests at the two ends, breaks, errors, salvages and stale
    replies, from routes.jsonl."""
    disc_ns = 0
    searching: dict[str, int | None] = {n: None for n in ENDS}
    counts: Counter[str] = Counter()
    for e in routes:
        node, kind, t = e["node"], e["event"], e["t_ns"]
        if kind == "link_broken":
            counts["brk"] += 1
        elif kind == "salvaged":
            counts["salv"] += 1
        elif kind == "reply" and e["by"] == "cache":
            counts["cache"] += 1
            if pos.broken(e["route"], t):
                counts["stale"] += 1
        if node not in ENDS:
            continue
        other = ENDS[1 - ENDS.index(node)]
        if kind == "request" and e["target"] == other:
            counts["req"] += e["propagating"]
            if searching[node] is None:
                searching[node] = t
        elif kind == "route_learned" and e["route"][-1] == other:
            if pos.broken(e["route"], t):
                counts["stale_end"] += 1
            if searching[node] is not None:
                disc_ns += t - searching[node]
                searching[node] = None
        elif kind == "error_received":
            counts["err"] += 1
    disc_ns += sum(end_ns - t for t in searching.values() if t is not None)
    return {"disc_s": disc_ns / 1e9, **{k: counts[k] for k in ("req", "brk", "err", "salv", "cache", "stale", "stale_end")}}


def profile(bundle: Path, summary: dict, duration_s: float) -> dict:
    """One run's row; `duration_s` is the scenario's (throughput is over all of it, as
    `airtrace reproduce holland-vaidya` counts it)."""
    end_ns = round(summary["end_s"] * 1e9)
    (paths,) = summary["network"]["paths"]
    duration = summary["end_s"]
    row = {
        "kbps": summary["flows"][0]["bytes_delivered"] * 8 / duration_s / 1e3,
        "none_s": paths["hops_s"].get("none", 0.0),
        "mean_hops": sum(float(h) * s for h, s in paths["hops_s"].items() if h != "none")
        / max(duration - paths["hops_s"].get("none", 0.0), 1e-9),
    }
    row |= tcp_profile(_jsonl(bundle / "tcpstate.jsonl"), end_ns)
    row |= route_profile(_jsonl(bundle / "routes.jsonl"), Positions(bundle / "mobility.jsonl"), end_ns)
    drops = Counter(r["reason"] for r in _jsonl(bundle / "link.jsonl") if r["kind"] == "packet_dropped" and r.get("flow") == 0)
    row["drops"] = dict(drops)
    return row


def _one(task: tuple[str, int, int, tuple[str, ...]]) -> tuple[int, int, dict]:
    scenario, speed, pattern, sets = task
    with tempfile.TemporaryDirectory(prefix="manet-speed-") as work:
        bundle = Path(work) / "run"
        summary = simulate(
            scenario,
            bundle,
            set=[
                f"network.mobility.speed_mps={speed}",
                f"network.mobility.pattern={pattern}",
                "link_log=true",
                "tcp_state_log=true",
                *sets,
            ],
        )
        return speed, pattern, profile(bundle, summary, reproduce._seconds(Path(scenario)))


COLUMNS = ("kbps", "none_s", "mean_hops", "rto", "stall_s", "backoff", "disc_s", "req", "brk", "err", "salv", "cache", "stale", "stale_end")


def main() -> int:
    """Runs the measurement as the arguments say and prints it."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--patterns", type=int, default=20)
    ap.add_argument("--speeds", default="2,10,20,30")
    ap.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per core)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a scenario override for every run")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    speeds = [int(s) for s in args.speeds.split(",")]
    scenario = str(reproduce.scenario("holland_vaidya_manet"))
    tasks = [(scenario, v, p, tuple(args.set)) for v in speeds for p in range(1, args.patterns + 1)]
    with workers.ordered_map(_one, tasks, jobs=args.jobs) as results:
        runs = list(results)
    if args.json:
        print(json.dumps([{"speed": v, "pattern": p, **row} for v, p, row in runs], indent=1))
        return 0
    print(f"mean over patterns 1-{args.patterns}; {' '.join(args.set) or 'scenario as shipped'}")
    print("speed  " + " ".join(f"{c:>9}" for c in COLUMNS) + "  drops of the flow's packets")
    for v in speeds:
        rows = [row for s, _, row in runs if s == v]
        means = [statistics.mean(r[c] for r in rows) for c in COLUMNS]
        drops: Counter[str] = Counter()
        for r in rows:
            drops.update(r["drops"])
        per = ", ".join(f"{k} {n / len(rows):.1f}" for k, n in drops.most_common())
        print(f"{v:3d}    " + " ".join(f"{m:9.1f}" for m in means) + f"  {per}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
