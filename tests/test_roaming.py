"""Roaming and Mobile IP handoffs as TCP feels them (issue 14 item 3): with 1 s agent
advertisements a handoff between subnets often costs TCP more than one timeout; with
100 ms advertisements the node registers at once and the cost is one retransmission
timeout. airtrace.handoff.cost reads it from the bundles."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

import airtrace
from airtrace.handoff import cost

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "roam_mobileip.toml"


def first_handoffs(tmp_path: Path, interval: str, seeds: range) -> list:
    costs = []
    for seed in seeds:
        out = tmp_path / f"{interval.replace(' ', '')}-{seed}"
        airtrace.simulate(SCENARIO, out=out, set={
            "seed": seed, "duration": "28 s", "network.captures": ["mn"], "network.air_captures": [],
            "network.mobile_ip.advertisement_interval": interval,
        })
        costs.append(cost(out))
    return costs


def test_faster_advertisements_cost_a_mobile_ip_handoff_less_time(tmp_path: Path) -> None:
    seeds = range(1, 5)
    slow = first_handoffs(tmp_path, "1 s", seeds)
    fast = first_handoffs(tmp_path, "100 ms", seeds)
    assert all(c.registered_after_s is not None and c.registered_after_s < 0.2 for c in fast), fast
    assert all(c.registered_after_s is not None and c.registered_after_s < 1.1 for c in slow), slow
    # A registration later than the retransmission timer loses the retransmission too.
    assert max(c.stall_s for c in slow) > 1.2, slow
    assert max(c.stall_s for c in fast) < 0.7, fast
    assert statistics.mean(c.stall_s for c in slow) > statistics.mean(c.stall_s for c in fast) + 0.2


def test_a_bundle_without_a_handoff_says_so(tmp_path: Path) -> None:
    out = tmp_path / "short"
    airtrace.simulate(SCENARIO, out=out, set={"duration": "2 s", "network.captures": ["mn"]})
    with pytest.raises(ValueError, match="no handoff of 'mn' in link.jsonl"):
        cost(out)

