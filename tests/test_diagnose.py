"""`airtrace diagnose`, `airtrace.diagnose` and `Trace.findings`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import CORPUS

import airtrace

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "testdata" / "pcaps" / "sample-sender.pcapng"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "airtrace.cli", *args], capture_output=True, text=True)


def test_json_lists_findings_with_the_documented_keys() -> None:
    done = cli("diagnose", str(SAMPLE), "--json")
    assert done.returncode == 0, done.stderr
    findings = json.loads(done.stdout)
    required = {"kind", "connection", "start_s", "end_s", "cost_s", "explanation", "fix", "evidence", "file"}
    assert all(required <= set(f) for f in findings)
    stall = [f for f in findings if f["kind"] == "timeout_backoff" and f["evidence"] == [2163, 2164, 2165]]
    assert len(stall) == 1 and stall[0]["details"]["max_backoff"] == 3
    assert {"link_outage", "spurious_timeout", "random_loss"} <= {f["kind"] for f in findings}


def test_text_report_names_cause_cost_and_fix() -> None:
    done = cli("diagnose", str(SAMPLE))
    assert done.returncode == 0, done.stderr
    assert "[timeout_backoff] connection 1 a_to_b, 13.74-16.01 s cost 2.26 s" in done.stdout
    assert "Fix:" in done.stdout and "Evidence: frames 2163, 2164, 2165" in done.stdout


def test_trace_findings_is_a_dataframe() -> None:
    findings = airtrace.read(SAMPLE).findings
    assert list(findings.columns)[:3] == ["kind", "connection", "direction"]
    assert (findings["kind"] == "timeout_backoff").sum() == 2
    assert findings["cost_s"].max() > 2.0


def test_bundle_shows_header_compression_failures(tmp_path: Path) -> None:
    bundle = tmp_path / "gsm"
    airtrace.simulate(ROOT / "scenarios" / "gsm_rlp.toml", bundle)
    findings = airtrace.diagnose(bundle)
    hc = [f for f in findings if f.kind == "header_compression_failure"]
    assert hc, [f.kind for f in findings]
    assert all(f.details["segments_discarded"] >= 5 for f in hc)
    assert any(f.kind == "excessive_queueing" for f in findings), "a 50-packet buffer at 960 B/s"


def test_unreadable_input_is_one_line_and_exit_1(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("not a capture\n")
    done = cli("diagnose", str(junk), str(SAMPLE), "--json")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "notes.txt" in done.stderr and "Traceback" not in done.stderr
    assert json.loads(done.stdout), "the readable input is still diagnosed"


def test_report_shows_the_diagnosis(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = cli("report", str(SAMPLE), "-o", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    assert 'id="findings"' in html
    assert "timeout_backoff a_to_b — 2.26 s lost" in html
    assert "Fix: " in html


def test_corpus_findings_match_what_the_manifest_says() -> None:
    """Every real capture is diagnosed without error; where the corpus MANIFEST documents
    the cause, the finding names it."""
    from conftest import CORPUS, corpus_files

    files = corpus_files()
    if not files:
        import pytest

        pytest.skip("no corpus beside the repository")
    kinds = {}
    for path in files:
        kinds[path.name] = {f.kind: f for f in airtrace.diagnose(path)}
    assert kinds["arkime_80211http.pcap"]["mac_retries"].evidence == (14, 17)
    assert "capture_artifact" in kinds["tcptrace_hardware_dups.dmp.gz"]
    for zero_window in ("ppa_tcp_zerowindowdead.pcapng", "ppa_tcp_zerowindowrecovery.pcapng", "tcptrace_zwnd.dmp.gz"):
        assert kinds[zero_window]["receiver_limited"].details["zero_window_periods"] >= 1, zero_window
    assert "timeout_backoff" in kinds["tcptrace_6syns.dmp.gz"], "the repeated SYNs back off"
    assert CORPUS.is_dir()


def _wlan_transfer(tmp_path: Path, name: str, rates: list[int]) -> Path:
    """A station sends one segment per 802.11 data frame at the given radiotap rates
    (500 kbit/s units); the access point's ACKs go back at 11 Mb/s."""
    from pcapgen import ACK, Capture, ipv4_tcp, radiotap_wlan

    ap, station = bytes.fromhex("020000000001"), bytes.fromhex("020000000002")
    client, server, mss = "198.18.0.1", "198.18.1.1", 1000
    cap = Capture(linktype=127)
    t = 0.0
    for i, rate in enumerate(rates):
        data = ipv4_tcp(client, server, 40000, 80, 1 + i * mss, 1, ACK, payload=bytes([i % 251]) * mss, ip_id=i)
        t += 0.004
        cap.add(t, radiotap_wlan(data, seq=2 * i, retry=False, transmitter=station, receiver=ap, rate_500kbps=rate))
        ack = ipv4_tcp(server, client, 80, 40000, 1, 1 + (i + 1) * mss, ACK, ip_id=5000 + i)
        t += 0.001
        cap.add(t, radiotap_wlan(ack, seq=2 * i + 1, retry=False, transmitter=ap, receiver=station))
    return cap.write(tmp_path / name)


def test_rate_adaptation_thrash_from_radiotap_rates(tmp_path: Path) -> None:
    thrashing = [22, 11, 22, 4, 11, 22, 11, 22, 4, 22] * 6  # 11, 5.5, 2 Mb/s, up and down
    findings = airtrace.diagnose(_wlan_transfer(tmp_path, "thrash.pcap", thrashing))
    thrash = [f for f in findings if f.kind == "rate_adaptation_thrash"]
    assert len(thrash) == 1, findings
    assert thrash[0].direction == "a_to_b"
    assert thrash[0].details["change_share"] > 0.5
    assert "2, 5.5, 11 Mbit/s" in thrash[0].explanation
    steady = [22] * 30 + [11] * 30  # one step down, and it stays there
    findings = airtrace.diagnose(_wlan_transfer(tmp_path, "steady.pcap", steady))
    assert not [f for f in findings if f.kind == "rate_adaptation_thrash"]


def test_bundle_diagnosis_reads_the_air_capture(tmp_path: Path) -> None:
    """A bundle with a sniffer's capture: the 802.11 findings come from air.pcap, their
    evidence turned into the sender capture's frames of the same packets, sorted."""
    bundle = tmp_path / "wlan"
    airtrace.simulate(ROOT / "scenarios" / "wlan_collisions.toml", bundle)
    findings = airtrace.diagnose(bundle)
    for f in findings:
        assert list(f.evidence) == sorted(set(f.evidence)), f"{f.kind}: evidence frames in capture order, once"
    (collisions,) = [f for f in findings if f.kind == "data_ack_collisions"]
    (at_air,) = [f for f in airtrace.diagnose(bundle / "air.pcap") if f.kind == "data_ack_collisions"]
    assert collisions.details == at_air.details
    assert abs(collisions.start_s - at_air.start_s) < 0.001, "one clock, first frames a backoff apart"
    sender = airtrace.read(bundle / "sender.pcap").packets().set_index("frame")
    air = airtrace.read(bundle / "air.pcap").packets().set_index("frame")
    assert collisions.evidence, collisions
    want = sorted((air.loc[e, "ip_src"], int(air.loc[e, "ip_id"])) for e in at_air.evidence)
    got = sorted((sender.loc[e, "ip_src"], int(sender.loc[e, "ip_id"])) for e in collisions.evidence)
    assert got == want


def test_a_cell_s_air_capture_shows_every_collision_the_simulator_made(tmp_path: Path) -> None:
    """Kuang's cell (scenarios/kuang_cell.toml): the channel loses nothing, so every MAC
    retry the simulator counted follows a collision of TCP data and ACKs, each costing
    both stations a retry. The diagnosis of the bundle reads the access point's air
    capture (frames stamped where they end there, overlaps judged on their TSFT starts)
    and finds exactly those collisions."""
    bundle = tmp_path / "cell"
    summary = airtrace.simulate(ROOT / "scenarios" / "kuang_cell.toml", bundle, set={"duration": "5 s"})
    retries = sum(n["frames_sent"]["data_retries"] for n in summary["network"]["nodes"])
    assert retries > 20 and not summary["network"]["drops"]
    (collisions,) = [f for f in airtrace.diagnose(bundle) if f.kind == "data_ack_collisions"]
    assert collisions.details["collision_retries"] == retries
    assert collisions.details["collisions"] * 2 == retries
    assert not [f for f in airtrace.diagnose(bundle) if f.kind == "bad_fcs"], "collisions are not corruption"


def test_kuang_at_100_m_is_diagnosed_as_rate_adaptation_thrash(tmp_path: Path) -> None:
    """Kuang's laptop 100 m from its access point (scenarios/kuang_100m.toml), its card
    probing rates by MIMD: the laptop's air capture shows the data rate changing hundreds
    of times a second, and the diagnosis names the thrash as the costliest finding of the
    laptop's direction. A fixed rate at the same place gives no such
    finding."""
    thrash, fixed = tmp_path / "mimd", tmp_path / "fixed"
    summary = airtrace.simulate(ROOT / "scenarios" / "kuang_100m.toml", thrash, set={"duration": "5 s"})
    (laptop,) = [n for n in summary["network"]["nodes"] if n["name"] == "laptop"]
    assert laptop["rate_changes"] > 500
    findings = [f for f in airtrace.diagnose(thrash) if f.direction == "a_to_b"]
    costliest = max(findings, key=lambda f: f.cost_s)
    assert costliest.kind == "rate_adaptation_thrash", [(f.kind, f.cost_s) for f in findings]
    airtrace.simulate(
        ROOT / "scenarios" / "kuang_100m.toml",
        fixed,
        set={"duration": "5 s", "network.rate_control": "fixed", "network.rate": "5.5 Mbit/s"},
    )
    assert not [f for f in airtrace.diagnose(fixed) if f.kind == "rate_adaptation_thrash"]


def test_a_manet_run_shows_the_stale_route_pathology_as_route_failures(tmp_path: Path) -> None:
    """Holland & Vaidya's MANET, movement pattern 2 at 10 m/s: as in the study's event
    table, packets of the flow are dropped for want of a route and the sender's timer
    backs off, doubling, for most of the run; the diagnosis names it route_failure and
    says ELFN is the fix. A one-link bundle never gets one."""
    bundle = tmp_path / "manet"
    airtrace.simulate(
        ROOT / "scenarios" / "holland_vaidya_manet.toml",
        bundle,
        set={"network.captures": ["n0"], "network.mobility.pattern": 2, "duration": "120 s"},
    )
    drops = [json.loads(line) for line in (bundle / "link.jsonl").read_text().splitlines()]
    assert any(d["reason"] == "no_route" and d["flow"] == 0 for d in drops)
    findings = airtrace.diagnose(bundle)
    backoff = max((f for f in findings if f.kind == "timeout_backoff"), key=lambda f: f.cost_s)
    assert backoff.details["max_backoff"] >= 5, backoff
    routes = [f for f in findings if f.kind == "route_failure"]
    assert routes and max(f.details["explains_timeout_s"] for f in routes) == backoff.cost_s
    assert all(f.cost_s == 0 for f in routes), "the episode's time is timeout_backoff's, counted once"
    assert all("ELFN" in f.fix for f in routes)
    # As in the study's table: a packet of the flow dropped for want of a route, then the
    # timer's back-off for the rest of the run.
    assert sum(f.details["no_route_drops"] for f in routes) >= 1
    one_link = tmp_path / "gsm"
    airtrace.simulate(ROOT / "scenarios" / "gsm_rlp.toml", one_link)
    assert not any(f.kind == "route_failure" for f in airtrace.diagnose(one_link))


def test_text_counts_the_timeouts_time_once() -> None:
    """The sample's outages explain its timeouts' waits: the text says so instead of
    costing the same seconds a second time (issue 17 item 1)."""
    done = cli("diagnose", str(SAMPLE))
    assert done.returncode == 0, done.stderr
    outages = [line for line in done.stdout.splitlines() if line.startswith("[link_outage]")]
    assert outages and all(" cost " not in line for line in outages), outages
    assert all(", behind " in line and "s of timeout_backoff's cost" in line for line in outages), outages
    assert "link_outage (behind " in done.stdout


def test_the_text_says_when_it_shows_part_of_the_evidence() -> None:
    """zeek_206_example_b's twelve timeouts in a row have twelve evidence frames; the
    text printed ten under "12 retransmission timeouts" without saying the list was cut
    (issue 17 item 1: numbers that match)."""
    capture = CORPUS / "zeek_206_example_b.pcap"
    finding = next(f for f in airtrace.diagnose(capture) if f.kind == "timeout_backoff" and f.details["timeouts"] == 12)
    assert len(finding.evidence) == 12
    done = cli("diagnose", str(capture))
    assert done.returncode == 0, done.stderr
    shown = ", ".join(str(x) for x in finding.evidence[:10])
    assert f"  Evidence: frames {shown} (10 of 12; --json lists them all)\n" in done.stdout
