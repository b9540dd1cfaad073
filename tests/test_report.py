"""The HTML report as a tool (issue 17 item 2), checked on what `report.build` puts in the
page: where it opens, both directions of each connection, the multi-layer panel's timeouts
and idle shading, findings and evidence frames on the report's clock, the size cap and the
progress bar. tests/test_report_browser.py clicks through the same page in a browser."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

import airtrace
from airtrace import plot, progress, report, views
from airtrace.finding import Finding

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "testdata" / "pcaps" / "sample-sender.pcapng"


def meta_of(page: str) -> dict:  # type: ignore[type-arg]
    return json.loads(re.search(r'<script type="application/json" id="airtrace-meta">(.*?)</script>', page, re.S)[1])


def panel(meta: dict, conn: int, pid: str) -> dict:  # type: ignore[type-arg]
    view = next(v for v in meta["connections_views"] if v["conn"] == conn)
    return next(p for p in view["panels"] if p["id"] == pid)


@pytest.fixture(scope="module")
def bursty(tmp_path_factory: pytest.TempPathFactory) -> views.Run:
    text = (ROOT / "scenarios" / "rais_burst_fixed.toml").read_text()
    text = text.replace('captures = ["sender", "receiver"]', 'captures = ["sender", "receiver", "link_in", "link_out"]')
    scenario = tmp_path_factory.mktemp("sc") / "rais_burst_fixed.toml"
    scenario.write_text(text)
    bundle = tmp_path_factory.mktemp("bundle") / "rais"
    airtrace.simulate(scenario, out=bundle)
    return views.load(bundle)


def transfer_with_a_stray_segment(path: Path) -> Path:
    """A handshake and one byte at 0 s, then nothing for 15 s, then 200 segments in 2 s."""
    from pcapgen import ACK, PSH, SYN, TcpConversation

    conversation = TcpConversation()
    seg, cap = conversation.seg, conversation.capture

    seg(0.000, True, 100, 0, SYN)
    seg(0.001, False, 500, 101, SYN | ACK)
    seg(0.002, True, 101, 501, ACK)
    seg(0.003, True, 101, 501, ACK | PSH, 1)
    seg(0.004, False, 501, 102, ACK)
    for k in range(200):
        seg(15.0 + 0.01 * k, True, 102 + 1000 * k, 501, ACK, 1000)
        seg(15.0005 + 0.01 * k, False, 501, 102 + 1000 * (k + 1), ACK)
    return cap.write(path)


def test_the_report_opens_where_the_data_is_not_on_a_stray_frame_15_s_early(tmp_path: Path) -> None:
    run = views.load(transfer_with_a_stray_segment(tmp_path / "stray.pcap"))
    meta = meta_of(report.build(run))
    a, b = meta["connections_views"][0]["focus"]
    assert a == pytest.approx(15.0, abs=1e-3) and b == pytest.approx(16.99, abs=1e-3)
    assert meta["connections_views"][0]["label"] == "connection 0 (198.18.0.1:40000 → 198.18.1.1:80), data a_to_b"


def test_the_connection_table_shows_both_directions(tmp_path: Path) -> None:
    run = views.load(SAMPLE)
    page = report.build(run)
    table = re.search(r'<table id="conns">.*?</table>', page, re.S)[0]
    groups = re.findall(r'<tbody data-conn="(\d+)">(.*?)</tbody>', table, re.S)
    assert [int(c) for c, _ in groups] == run.connections["id"].tolist()
    for conn, body in groups:
        rows = re.findall(r'<tr data-dir="(\w+)">(.*?)</tr>', body, re.S)
        assert [d for d, _ in rows] == ["a_to_b", "b_to_a"]
        assert "<td>a_to_b</td>" in rows[0][1] and "<td>b_to_a</td>" in rows[1][1]
    # conn 1, the iperf upload from 198.18.0.1: its b → a row carries the receiver's ACKs, no data;
    # conn 0, an HTTP exchange: the response (b → a) is data, shown as such.
    c = run.connections.loc[0]
    body = dict(groups)["0"]
    b_row = re.findall(r'<tr data-dir="b_to_a">(.*?)</tr>', body, re.S)[0]
    assert f"<td>{c['b_to_a.data_bytes']:,}</td>" in b_row and c["b_to_a.data_bytes"] > 0
    # Read from the rtt struct of each direction; times and rates with their SI prefix.
    rtt = c["a_to_b.rtt"]
    a_row = re.findall(r'<tr data-dir="a_to_b">(.*?)</tr>', body, re.S)[0]
    assert f"<td>{rtt['min_s'] * 1e6:.3g} µs</td>" in a_row, a_row
    assert f"<td>{c['a_to_b.goodput_bps']:.3g} bit/s</td>" in a_row
    assert f"<td>{c['b_to_a.goodput_bps'] / 1e3:.3g} kbit/s</td>" in b_row


def test_the_interactive_multilayer_panel_has_the_rto_markers_and_idle_shading_the_png_has(bursty: views.Run) -> None:
    meta = meta_of(report.build(bursty))
    series = {s["label"]: s for s in panel(meta, 0, "multilayer")["series"]}
    png = plot.multilayer_figure(bursty, 0)
    ax = png.axes[0]
    (rto_png,) = [line for line in ax.get_lines() if line.get_label().startswith("RTO expiry")]
    assert series["RTO expiry"]["n"] == len(rto_png.get_xdata()) > 0
    assert series["RTO expiry"]["important"], "never thinned"
    idle = next(s for k, s in series.items() if k.startswith("link idle while the sender had data"))
    shaded = [p for p in ax.patches if p.get_alpha() == pytest.approx(0.12)]
    assert idle["style"] == "spans" and idle["n"] == len(shaded) > 0


def test_findings_and_their_evidence_frames_sit_on_the_report_clock(tmp_path: Path) -> None:
    """A flow that starts 5 s into the run: a finding's times count from the first packet
    of its capture, the report's from the bundle's epoch, 5 s apart. Each evidence frame,
    placed by its frame number, lies in its finding's span on the report's axis, and
    links to it."""
    bundle = tmp_path / "late"
    airtrace.simulate(ROOT / "scenarios" / "rais_burst_fixed.toml", out=bundle,
                      set={"flow[1].start": "5 s", "duration": "30 s"})
    run = views.load(bundle)
    first = float(run.packets("sender")["t"].iloc[0])
    assert first >= 5.0
    findings = [f for f in airtrace.diagnose(bundle) if f.evidence]
    assert findings
    page = report.build(run, findings=findings, findings_capture=run.captures["sender"])
    meta = meta_of(page)
    for f, placed in zip(findings, meta["findings"]):
        assert placed["conn"] == f.connection
        assert tuple(x["frame"] for x in placed["frames"]) == f.evidence
        a, b = placed["span"]
        assert a == pytest.approx(f.start_s + first) and b == pytest.approx(f.end_s + first)
        for x in placed["frames"]:
            assert a - 1e-6 <= x["t"] <= b + 1e-6, (f.kind, a, b, x)
            assert x["conn"] == f.connection
    assert f'data-frame="{findings[0].evidence[0]}"' in page


def test_thinning_keeps_the_envelope_gaps_and_peaks() -> None:
    x = np.concatenate([np.linspace(0, 10, 50_000), np.linspace(20, 30, 50_000)])
    y = np.sin(x) * 100
    y[1234] = 1e6  # one peak
    s = views.Series("data", x, y)
    t = report.thinned(s, 4000)
    assert len(t) <= 4000 and "envelope" in t.label
    assert t.y.max() == 1e6 and t.y.min() == y.min()
    assert not ((t.x > 10) & (t.x < 20)).any(), "the gap stays empty"
    assert t.x.min() == 0 and t.x.max() == 30
    important = views.Series("retransmissions", x, y, important=True)
    assert report.thinned(important, 10) is important


def test_a_report_over_its_size_cap_is_thinned_not_cut(bursty: views.Run) -> None:
    whole = report.build(bursty)
    assert len(whole) < report.MAX_REPORT_BYTES
    cap = report.PAGE_BYTES + len(whole) // 3
    small = report.build(bursty, max_bytes=cap)
    assert len(small.encode()) <= cap
    full_series = {s["label"]: s for s in panel(meta_of(whole), 0, "tsg")["series"]}
    small_series = panel(meta_of(small), 0, "tsg")["series"]
    assert any("envelope" in s["label"] for s in small_series)
    for s in small_series:
        if s["important"]:
            assert s["n"] == full_series[s["label"]]["n"], "every retransmission and timeout kept"


def test_building_a_report_shows_a_progress_bar(bursty: views.Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "EVERY", 0.0)
    stream = io.StringIO()
    report.report(views.load(bursty.bundle), tmp_path / "r.html", progress=stream)
    drawn = stream.getvalue()
    for phase in ("reading the sender capture", "drawing connection 0 (1/1)", "compressing the series"):
        assert phase in drawn, drawn
    assert " 100% " in drawn and drawn.endswith("\r"), "full at the end, then taken off the line"


def test_an_evidence_frame_is_placed_where_the_plots_draw_it(tmp_path: Path) -> None:
    """Two requests of 100 bytes, each answered with 5000: the responses are the data
    drawn; the second request (sequence 101, acknowledging 5001) is drawn on the ACK
    line, at 5001, not at its own sequence number."""
    from pcapgen import ACK, PSH, SYN, TcpConversation

    conversation = TcpConversation()
    seg, cap = conversation.seg, conversation.capture

    seg(0.00, True, 100, 0, SYN)
    seg(0.01, False, 500, 101, SYN | ACK)
    seg(0.02, True, 101, 501, ACK)
    for k in range(2):
        seg(0.03 + k, True, 101 + 100 * k, 501 + 5000 * k, ACK | PSH, 100)
        for j in range(5):
            seg(0.04 + k + 0.001 * j, False, 501 + 5000 * k + 1000 * j, 201 + 100 * k, ACK, 1000)
    run = views.load(cap.write(tmp_path / "two.pcap"))
    p = run.packets(run.sender_name)
    second, response = p[p["seglen"] == 100].iloc[1], p[p["seglen"] == 1000].iloc[6]
    assert (second["seq_rel"], second["ack_rel"]) == (101, 5001)
    evidence = (int(second["frame"]), int(response["frame"]))
    findings = [Finding("ack_compression", 0, "a_to_b", 0.0, 1.0, 0.0, 0.0, evidence, "x", "y")]
    placed = {x["frame"]: x["y"] for x in meta_of(report.build(run, findings=findings))["findings"][0]["frames"]}
    assert placed[int(second["frame"])] == 5001
    assert placed[int(response["frame"])] == float(response["seq_rel"]) == 6001
