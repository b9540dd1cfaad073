"""What a Mobile IP handoff costs TCP with 1 s advertisements, 100 ms advertisements and
solicitation (docs/simulator.md, "Mobile IP"): scenarios/roam_mobileip.toml over seeds
1..N, the first handoff of each run measured by airtrace.handoff.cost.

    .venv/bin/python bench/mobileip_handoff.py [--seeds 10]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from airtrace.simulation import simulate
from airtrace.handoff import HandoffCost, cost

ROOT = Path(__file__).resolve().parent.parent
SETTINGS: dict[str, dict[str, object]] = {
    "advertisements every 1 s": {"network.mobile_ip.advertisement_interval": "1 s"},
    "advertisements every 100 ms": {"network.mobile_ip.advertisement_interval": "100 ms"},
    "1 s, and solicitation": {"network.mobile_ip.solicit": True},
}


def measure(settings: dict[str, object], seeds: range, workdir: Path) -> list[HandoffCost]:
    """The cost of the first handoff of each seed's run with `settings`."""
    costs = []
    for seed in seeds:
        out = workdir / f"seed{seed}"
        sets = {"seed": seed, "network.captures": ["mn"], "network.air_captures": [], **settings}
        simulate(ROOT / "scenarios" / "roam_mobileip.toml", out=out, set=sets)
        costs.append(cost(out))
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    seeds = range(1, args.seeds + 1)
    print("| setting | registered, s after the handoff | stall, s: mean (range) | goodput in the 5 s, Mbit/s |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, settings in SETTINGS.items():
            costs = measure(settings, seeds, Path(tmp) / name.replace(" ", "-"))
            reg = statistics.mean(c.registered_after_s for c in costs if c.registered_after_s is not None)
            stall = [c.stall_s for c in costs]
            goodput = statistics.mean(c.goodput_bps for c in costs) / 1e6
            print(
                f"| {name} | {reg:.3f} | {statistics.mean(stall):.2f} ({min(stall):.2f}–{max(stall):.2f})"
                f" | {goodput:.3f} |"
            )


if __name__ == "__main__":
    main()
