"""Correlation across captures: clock offset and drift removed, losses placed between points."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import airtrace
from airtrace import pcapio
from airtrace.correlate import correlate, correlate_bundle

ROOT = Path(__file__).resolve().parent.parent
OFFSET_NS = 1_234_000_000
DRIFT = 50e-6


@pytest.fixture(scope="module", params=["rais_burst_fixed", "loss_bernoulli"])
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    text = (ROOT / "scenarios" / f"{request.param}.toml").read_text()
    text = text.replace('captures = ["sender", "receiver"]', "")
    text = 'captures = ["sender", "receiver", "link_in", "link_out"]\n' + text
    scenario = tmp_path_factory.mktemp("sc") / f"{request.param}.toml"
    scenario.write_text(text)
    out = tmp_path_factory.mktemp("bundle") / request.param
    airtrace.simulate(scenario, out=out)
    return out


def test_offset_and_drift_are_removed_to_within_a_millisecond(run: Path, tmp_path: Path) -> None:
    records = list(pcapio.read_records(run / "receiver.pcap"))
    t0 = records[0].ts_ns
    skewed = [
        pcapio.Record(r.ts_ns + OFFSET_NS + int((r.ts_ns - t0) * DRIFT), r.linktype, r.data, r.orig_len) for r in records
    ]
    pcapio.write_pcap(tmp_path / "receiver-skewed.pcap", skewed)
    assert airtrace.read(tmp_path / "receiver-skewed.pcap").frames == len(records)

    corr = correlate({"sender": run / "sender.pcap", "receiver": tmp_path / "receiver-skewed.pcap"})
    clock = corr.clocks["receiver"]
    assert clock.pairs > 1000
    assert clock.offset_s == pytest.approx(1.234, abs=1e-3)
    assert clock.drift * 1e6 == pytest.approx(50, abs=1)
    true = np.array([r.ts_ns for r in records])
    fixed = clock.to_reference_ns(np.array([r.ts_ns for r in skewed]))
    assert np.abs(fixed - true).max() < 1e6, "every packet back on the sender's clock to within 1 ms"
    # One-way delays are physical again: positive, and the lost packets were lost on the way.
    delays = corr.packets["delay_sender_receiver"].dropna()
    assert delays.min() > 0 and delays.max() < 60
    assert set(corr.lost()["lost_between"]) <= {"sender -> receiver", "receiver -> sender"}


def test_bundle_losses_are_placed_on_the_link(run: Path) -> None:
    corr = correlate_bundle(run)
    assert all(c.offset_s == 0 for c in corr.clocks.values()), "a bundle's captures share one clock"
    lost = corr.lost()
    summary = airtrace.read(run / "sender.pcap").connections.iloc[0]
    assert len(lost) > 0 and summary["a_to_b.retransmitted_packets"] > 0
    assert set(lost["lost_between"]) == {"link_in -> link_out"}
    assert set(lost["link_fate"]) <= {"lost", "dropped:queue"}
    assert corr.paths[("198.18.0.1", "198.18.1.1")] == ["sender", "link_in", "link_out", "receiver"]
