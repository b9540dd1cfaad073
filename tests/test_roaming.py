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


def test_the_diagnosis_names_the_handoff_behind_the_timeouts(tmp_path: Path) -> None:
    """Seed 3 with 1 s advertisements: the node registers 1 s after it associated,
    later than TCP's timer; the timeouts are the handoff's, and the fix says so."""
    out = tmp_path / "mip"
    airtrace.simulate(SCENARIO, out=out, set={"seed": 3, "duration": "28 s", "network.air_captures": []})
    found = [f for f in airtrace.diagnose(out) if f.kind == "handoff"]
    assert len(found) == 1, found
    f = found[0]
    timeouts = [t for t in airtrace.diagnose(out) if t.kind == "timeout_backoff"]
    assert f.details["explains_timeout_s"] == sum(t.cost_s for t in timeouts) > 1.0
    assert f.cost_s == 0.0, "the time is timeout_backoff's, counted once"
    assert f.details["silence_s"] > 1.2 and f.evidence
    assert f.details["handoff_gap_s"] == pytest.approx(0.05)
    assert 0.5 < f.details["registration_s"] < 1.1
    assert f.details["not_associated_drops"] > 10
    assert "mn handed off from ap1 to ap2" in f.explanation and "Mobile IP registered it" in f.explanation
    assert "advertisement_interval" in f.fix and "hinted handoff" in f.fix


def test_a_layer_2_handoff_is_named_without_a_registration(tmp_path: Path) -> None:
    out = tmp_path / "l2"
    airtrace.simulate(ROOT / "scenarios" / "roam_l2.toml", out=out, set={"duration": "28 s", "network.air_captures": []})
    found = [f for f in airtrace.diagnose(out) if f.kind == "handoff"]
    assert len(found) == 1, found
    f = found[0]
    assert "registration_s" not in f.details and f.details["not_associated_drops"] > 10
    # No timeout finding spans it here: the silence is its own cost.
    assert f.cost_s == f.details["silence_s"] > 0.2
    assert "mn handed off from ap1 to ap2" in f.explanation
