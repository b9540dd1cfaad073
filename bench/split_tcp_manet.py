"""Split-TCP against plain TCP in Holland & Vaidya's MANET: the measurement behind
docs/split-tcp.md's table and `airtrace reproduce holland-vaidya`'s Split-TCP figures.

    .venv/bin/python bench/split_tcp_manet.py [--patterns 50] [--jobs N] [--json]

Three flows (n0 to n1, n2 to n3, n4 to n5) in scenarios/holland_vaidya_manet.toml at
10 m/s, 300 s, movement patterns 1 … N, with a proxy every 2 hops that follows each new
route and without proxies (airtrace.reproduce.split_tcp_runs). Prints each pattern's
flows and totals, then the gain in total throughput with its 95 % bootstrap interval
over patterns and the mean unfairness; with --json, those per pattern and in all.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from airtrace import reproduce


def main() -> int:
    """Runs the measurement as the arguments say and prints it."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--patterns", type=int, default=50)
    ap.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per core)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="split-tcp-") as work:
        runs = reproduce.split_tcp_runs(Path(work), args.patterns, args.jobs)
    gain = reproduce.split_tcp_gain(runs)
    low, high = reproduce.bootstrap_interval(runs)
    unfair = {kind: statistics.mean(reproduce.unfairness(getattr(r, kind)) for r in runs) for kind in ("tcp", "split")}
    if args.json:
        patterns = [{"pattern": r.pattern, "tcp": r.tcp, "split": r.split} for r in runs]
        print(json.dumps({"patterns": patterns, "gain": gain, "interval": [low, high], "unfairness": unfair}, indent=1))
        return 0
    print("pattern  plain TCP (kbit/s per flow, total, unfairness)  Split-TCP (same)  gain")
    for r in runs:
        cells = [" ".join(f"{x:6.1f}" for x in kbps) + f"  {sum(kbps):7.1f} ({reproduce.unfairness(kbps):.2f})" for kbps in (r.tcp, r.split)]
        change = (sum(r.split) / sum(r.tcp) - 1) * 100 if sum(r.tcp) > 0 else 0.0
        print(f"{r.pattern:7d}  {cells[0]}  {cells[1]}  {change:+6.1f} %")
    tcp, split = (statistics.mean(sum(getattr(r, kind)) for r in runs) for kind in ("tcp", "split"))
    print(f"mean total: plain {tcp:.1f} kbit/s, Split-TCP {split:.1f} kbit/s: gain {gain:+.1f} % "
          f"(95 % bootstrap interval {low:+.1f} to {high:+.1f} %)")
    print(f"unfairness: plain {unfair['tcp']:.2f}, Split-TCP {unfair['split']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
