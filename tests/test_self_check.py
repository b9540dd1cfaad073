"""The self-check (issue 18): no output holds a value that cannot be true.

Run over every capture here (the real-capture corpus beside the repository and the
captures under testdata/), `airtrace analyze --json` (the connection table and the
findings in one document) must hold no negative time, no RTT longer than its
connection, no count larger than what contains it, no finding outside the capture or
reported twice; and the self-check built into the analyzer and the diagnosis must have
had nothing to catch (a warning from it would mean a decoding or detection rule went
wrong on that capture). The rules are checked here independently of the Rust code
that enforces them (crates/airtrace-analysis/src/selfcheck.rs,
crates/airtrace-diagnose/src/selfcheck.rs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, corpus_files

AIRTRACE = Path(sys.executable).parent / "airtrace"
CAPTURES = [
    *corpus_files(),
    *sorted(p for p in (ROOT / "testdata").rglob("*") if p.suffix in (".pcap", ".pcapng", ".gz", ".cap")),
]
EPS = 1e-6


def impossible(document: dict) -> list[str]:
    """Every value in one file's `analyze --json` report that cannot be true."""
    problems = []
    findings_seen = set()
    durations = {}
    for c in document["connections"]:
        at = f"connection {c['id']}"
        durations[c["id"]] = c["duration_s"]
        if c["start_s"] < 0 or c["end_s"] < c["start_s"] - EPS or c["duration_s"] < 0:
            problems.append(f"{at}: span {c['start_s']}–{c['end_s']}")
        if c["handshake_rtt_s"] is not None and not 0 <= c["handshake_rtt_s"] <= c["duration_s"] + EPS:
            problems.append(f"{at}: handshake RTT {c['handshake_rtt_s']} of {c['duration_s']} s")
        for d in ("a_to_b", "b_to_a"):
            m = c[d]
            rtt = m["rtt"]
            if rtt["samples"] and not 0 <= rtt["min_s"] <= rtt["max_s"] <= c["duration_s"] + EPS:
                problems.append(f"{at} {d}: RTT {rtt['min_s']}–{rtt['max_s']} in {c['duration_s']} s")
            parts = [
                ("data_packets", "packets"),
                ("retransmitted_packets", "packets"),
                ("retransmitted_bytes", "data_bytes"),
                ("unique_bytes", "data_bytes"),
                ("timeout_retransmissions", "retransmitted_packets"),
                ("timeouts", "timeout_retransmissions"),
                ("pushed_data_packets", "data_packets"),
                ("urgent_data_packets", "data_packets"),
            ]
            problems += [f"{at} {d}: {a} {m[a]} > {b} {m[b]}" for a, b in parts if m[a] > m[b]]
            wait = m["max_retransmit_wait_s"]
            if wait is not None and not 0 <= wait <= c["duration_s"] + EPS:
                problems.append(f"{at} {d}: retransmission wait {wait} in {c['duration_s']} s")
            if m["initial_window_bytes"] is not None and m["initial_window_bytes"] > m["data_bytes"]:
                problems.append(f"{at} {d}: initial window {m['initial_window_bytes']} > {m['data_bytes']}")
            kinds = sum(m[k] for k in ("fast_retransmissions", "sack_retransmissions",
                                       "timeout_retransmissions", "tail_loss_probes"))
            if kinds > m["retransmitted_packets"]:
                problems.append(f"{at} {d}: {kinds} retransmissions by kind of {m['retransmitted_packets']}")
    packets = sum(c[d]["packets"] for c in document["connections"] for d in ("a_to_b", "b_to_a"))
    if packets > document["tcp_frames"]:
        problems.append(f"{packets} packets in connections of {document['tcp_frames']} TCP frames")
    for f in document["findings"]:
        at = f"{f['kind']} of connection {f['connection']}"
        key = (f["kind"], f["connection"], f["direction"], f["start_s"], f["end_s"])
        if key in findings_seen:
            problems.append(f"{at}: reported twice")
        findings_seen.add(key)
        if f["start_s"] < 0 or f["end_s"] < f["start_s"] - EPS:
            problems.append(f"{at}: span {f['start_s']}–{f['end_s']}")
        if not 0 <= f["cost_s"] <= durations.get(f["connection"], float("inf")) + EPS:
            problems.append(f"{at}: cost {f['cost_s']} s")
        if not 0 <= f["throughput_share"] <= 1 + EPS:
            problems.append(f"{at}: share {f['throughput_share']}")
        if any(not 1 <= e <= document["frames"] for e in f["evidence"]):
            problems.append(f"{at}: evidence {f['evidence']} of {document['frames']} frames")
    return problems


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_no_output_holds_a_value_that_cannot_be_true(capture: Path) -> None:
    run = subprocess.run([AIRTRACE, "analyze", "--json", capture], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    (document,) = json.loads(run.stdout)["files"]
    assert impossible(document) == []
    caught = [w for w in document["warnings"] if "self-check" in w]
    assert caught == [], "the self-check caught what a rule got wrong"


def test_the_checker_itself_sees_impossible_values() -> None:
    """The rules above are not vacuous: a report with an RTT longer than its connection,
    more retransmissions than packets and a finding reported twice is caught three times."""
    direction = {
        "packets": 2, "data_packets": 2, "data_bytes": 10, "unique_bytes": 10, "retransmitted_packets": 3,
        "retransmitted_bytes": 0, "timeout_retransmissions": 0, "timeouts": 0, "fast_retransmissions": 0,
        "sack_retransmissions": 0, "tail_loss_probes": 0, "pushed_data_packets": 0, "urgent_data_packets": 0,
        "max_retransmit_wait_s": None, "initial_window_bytes": None,
        "rtt": {"samples": 1, "min_s": 0.1, "max_s": 9.0},
    }
    quiet = {**direction, "retransmitted_packets": 0, "rtt": {"samples": 0}}
    finding = {"kind": "timeout_backoff", "connection": 0, "direction": "a_to_b", "start_s": 1.0, "end_s": 2.0,
               "cost_s": 1.0, "throughput_share": 0.5, "evidence": [1]}
    document = {
        "frames": 4, "tcp_frames": 4,
        "connections": [{"id": 0, "start_s": 0.0, "end_s": 2.0, "duration_s": 2.0, "handshake_rtt_s": None,
                         "a_to_b": direction, "b_to_a": quiet}],
        "findings": [finding, finding],
    }
    assert impossible(document) == [
        "connection 0 a_to_b: RTT 0.1–9.0 in 2.0 s",
        "connection 0 a_to_b: retransmitted_packets 3 > packets 2",
        "timeout_backoff of connection 0: reported twice",
    ]
