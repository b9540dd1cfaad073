#!/usr/bin/env python3
"""Regenerate the example figures of docs/views.md (docs/img/views-*.png).

    .venv/bin/python scripts/make_view_figures.py

Simulates three scenarios (bursty link, overbuffered slow link, GSM RLP link with
resets) into a temporary directory and draws their figures with airtrace.plot.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import airtrace
from airtrace import plot, views

ROOT = Path(__file__).resolve().parent.parent
IMG = ROOT / "docs" / "img"

FIGURES = {
    # scenario: [(kind, time window or None), ...]
    "rais_burst_fixed": [("multilayer", (10.0, 16.0)), ("tsg", (10.0, 16.0)), ("utilization", None)],
    "overbuffered_slow": [("multilayer", None), ("rtt", None)],
    "gsm_rlp_resets": [("multilayer", None), ("tsg", None), ("rtt", None)],
}


def main() -> None:
    IMG.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, figs in FIGURES.items():
            text = (ROOT / "scenarios" / f"{name}.toml").read_text()
            lines = [line for line in text.splitlines() if not line.startswith("captures")]
            scenario = Path(tmp) / f"{name}.toml"
            scenario.write_text('captures = ["sender", "receiver", "link_in", "link_out"]\n' + "\n".join(lines) + "\n")
            airtrace.simulate(scenario, out=Path(tmp) / name)
            run = views.load(Path(tmp) / name)
            for kind, window in figs:
                (path,) = plot.plot(run, IMG / f"views-{name}-{kind}.png", kind=kind, time=window, dpi=100)
                print(path)


if __name__ == "__main__":
    main()
