"""Bachmann's figures from the simulator: Table 1 (TCP stream and on-off in four rooms)
and the UDP rate fallback of Fig. 19 (docs/simulator.md, "Signal, errors and rates").

    .venv/bin/python bench/bachmann.py [--seeds N] [--rooms 15,16] [--no-walk] [--set KEY=VALUE] [--json]

(10 seeds by default: one room-16 run carries a few deep fades, and whether one falls
in a burst or a silence moves it by a third.)

`airtrace reproduce bachmann` with a choice of rooms and overrides of the room runs
(python/airtrace/bachmann.py says what is measured); prints each figure beside the
paper's, or with --json the figures' means by name.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from airtrace import reproduce


def main() -> int:
    """Runs the study as the arguments say and prints its figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--json", action="store_true", help="the figures' means by name")
    ap.add_argument("--rooms", default="23,14,15,16", help="which rooms (default: all)")
    ap.add_argument("--no-walk", action="store_true", help="rooms only")
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE for the room runs")
    args = ap.parse_args()
    rooms = [int(r) for r in args.rooms.split(",")]
    result = reproduce.reproduce("bachmann", seeds=args.seeds, rooms=rooms, walk=not args.no_walk, sets=args.set)
    if args.json:
        print(json.dumps({f.name: statistics.mean(f.measured) for f in result.figures if f.measured}, indent=1))
    else:
        print(result.text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
