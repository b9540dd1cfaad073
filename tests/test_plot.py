"""Static figures: each draws what the run holds (counts checked against the captures and logs)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import airtrace
from airtrace import plot, views
from conftest import CORPUS

ROOT = Path(__file__).resolve().parent.parent


def bundle_of(name: str, tmp: pytest.TempPathFactory) -> Path:
    text = (ROOT / "scenarios" / f"{name}.toml").read_text()
    if "captures" not in text:
        text = 'captures = ["sender", "receiver", "link_in", "link_out"]\n' + text
    scenario = tmp.mktemp("sc") / f"{name}.toml"
    scenario.write_text(text)
    out = tmp.mktemp("bundle") / name
    airtrace.simulate(scenario, out=out)
    return out


@pytest.fixture(scope="module")
def rlp(tmp_path_factory: pytest.TempPathFactory) -> views.Run:
    return views.load(bundle_of("gsm_rlp_resets", tmp_path_factory))


@pytest.fixture(scope="module")
def bursty(tmp_path_factory: pytest.TempPathFactory) -> views.Run:
    return views.load(bundle_of("rais_burst_fixed", tmp_path_factory))


def lines_by_label(fig) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return {line.get_label(): line for ax in fig.axes for line in ax.get_lines()}


def test_multilayer_draws_every_layer(rlp: views.Run) -> None:
    fig = plot.multilayer_figure(rlp)
    lines = lines_by_label(fig)
    sender = rlp.packets("sender")
    data = sender[(sender["dir"] == 0) & (sender["seglen"] > 0)]
    snd = next(v for k, v in lines.items() if k.startswith("TcpSnd data"))
    assert len(snd.get_xdata()) == len(data)
    assert any(k.startswith("TcpRcv ACKs") for k in lines)
    log = [json.loads(x) for x in (Path(rlp.bundle) / "link.jsonl").read_text().splitlines()]
    resets = sum(r["kind"] == "link_reset" for r in log)
    retx = sum(r["kind"] == "frame_retransmitted" and r["dir"] == "down" for r in log)
    assert resets > 0 and f"link reset ({resets})" in lines
    link_retx = next(v for k, v in lines.items() if k.startswith("link frame retransmissions"))
    assert len(link_retx.get_xdata()) == retx
    assert any(k.startswith("cwnd (sender state)") for k in lines)
    texts = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
    assert f"{resets} link resets" in texts and "utilization" in texts


def test_tsg_marks_every_retransmission_by_kind(bursty: views.Run) -> None:
    fig = plot.tsg_figure(bursty)
    lines = lines_by_label(fig)
    conn = bursty.connections.iloc[0]
    marked = sum(len(v.get_xdata()) for k, v in lines.items() if k.startswith(("retransmission", "fast retransmit", "SACK recovery")))
    assert marked == conn["a_to_b.retransmitted_packets"]
    rto = next(v for k, v in lines.items() if k.startswith("RTO expiry"))
    assert len(rto.get_xdata()) == conn["a_to_b.timeouts"]
    assert "ACK line [" in " ".join(lines) and any(k.startswith("receive window") for k in lines)


def test_utilization_matches_the_simulator(bursty: views.Run) -> None:
    u = views.utilization(bursty, 0)
    assert u.idle_source == "from the link log"
    assert u.idle_s == pytest.approx(bursty.summary["flows"][0]["idle_s"], rel=0.01)
    assert u.resent_bytes == bursty.connections.iloc[0]["a_to_b.retransmitted_bytes"]
    fig = plot.utilization_figure(bursty)
    assert len(fig.axes[0].patches) == 3 * len(bursty.connections)


def test_a_capture_alone_gets_an_inferred_cwnd(bursty: views.Run) -> None:
    run = views.load(bursty.captures["sender"])
    fig = plot.cwnd_figure(run)
    assert "(inferred)" in fig.axes[0].get_title(loc="left")
    (line,) = fig.axes[0].get_lines()
    assert "inferred" in line.get_label() and len(line.get_xdata()) > 1000
    est = views.rtt(run, 0)
    assert "estimated" in est["rto"].label
    # Without the link log, idle time is estimated from gaps in the ACKs: close to the simulator's.
    u = views.utilization(run, 0)
    assert "estimated" in u.idle_source
    assert u.idle_s == pytest.approx(bursty.summary["flows"][0]["idle_s"], rel=0.15)


@pytest.mark.parametrize("ext,magic", [("png", b"\x89PNG"), ("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_formats_follow_the_extension(rlp: views.Run, tmp_path: Path, ext: str, magic: bytes) -> None:
    (path,) = plot.plot(rlp, tmp_path / f"fig.{ext}", kind="rtt", time=(0, 60))
    assert Path(path).read_bytes().startswith(magic)


def test_cli_plot_all(rlp: views.Run, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "airtrace.cli", "plot", rlp.bundle, "-o", str(tmp_path / "run.png"), "--kind", "all"],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"run-{k}.png" for k in plot.KINDS)
    bad = subprocess.run([sys.executable, "-m", "airtrace.cli", "plot", rlp.bundle, "-o", "x.png", "--kind", "nope"],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "unknown plot kind" in bad.stderr


def test_cli_report(rlp: views.Run, tmp_path: Path) -> None:
    findings = tmp_path / "f.json"
    findings.write_text(json.dumps([{
        "kind": "header_compression_failure", "connection": 0, "direction": "a_to_b", "start_s": 1.0, "end_s": 2.0,
        "cost_s": 1.0, "throughput_share": 0.1, "evidence": [], "explanation": "Link resets flush the buffer",
        "fix": "a larger RLP N2", "details": {}, "file": "run",
    }]))
    out = tmp_path / "r.html"
    done = subprocess.run([sys.executable, "-m", "airtrace.cli", "report", rlp.bundle, "-o", str(out), "--findings", str(findings)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "Link resets flush the buffer" in text and "header_compression_failure a_to_b — 1.00 s lost" in text
    assert 'id="findings"' in text
    assert "http://" not in text and "https://" not in text, "nothing to fetch"
    plain = tmp_path / "p.html"
    subprocess.run([sys.executable, "-m", "airtrace.cli", "report", rlp.bundle, "-o", str(plain), "--no-findings"],
                   check=True, capture_output=True)
    assert 'id="findings"' not in plain.read_text(), "no findings section without findings"
    diagnosed = tmp_path / "d.html"
    subprocess.run([sys.executable, "-m", "airtrace.cli", "report", rlp.bundle, "-o", str(diagnosed)], check=True,
                   capture_output=True)
    assert "header_compression_failure" in diagnosed.read_text() or "timeout_backoff" in diagnosed.read_text(), (
        "by default the report shows airtrace diagnose's findings"
    )


def test_captures_of_one_run_share_a_time_axis(bursty: views.Run, tmp_path: Path) -> None:
    """Two plain captures, the receiver's clock 1.234 s ahead and 50 ppm fast: the receiver's
    data land just after the sender's on the figure, not 1.2 s later."""
    from airtrace import pcapio

    records = list(pcapio.read_records(bursty.captures["receiver"]))
    t0 = records[0].ts_ns
    pcapio.write_pcap(tmp_path / "receiver.pcap", [
        pcapio.Record(r.ts_ns + 1_234_000_000 + int((r.ts_ns - t0) * 50e-6), r.linktype, r.data, r.orig_len) for r in records
    ])
    run = views.load([bursty.captures["sender"], tmp_path / "receiver.pcap"])
    layers = views.multilayer(run, 0)
    snd, rcv = layers["TcpSnd_data"], layers["TcpRcv_data"]
    first = {y: x for x, y in zip(rcv.x[::-1], rcv.y[::-1])}
    sent = {y: x for x, y in zip(snd.x[::-1], snd.y[::-1])}
    delays = [first[y] - x for y, x in sent.items() if y in first]
    assert len(delays) > 1000 and 0 < min(delays) < 0.05
    fig = plot.multilayer_figure(run, time=(10, 14))
    assert any(k.startswith("TcpRcv data") for k in lines_by_label(fig))


def test_multilayer_marks_collisions_on_a_shared_channel(tmp_path_factory: pytest.TempPathFactory) -> None:
    run = views.load(bundle_of("wlan_collisions", tmp_path_factory))
    link = run.link
    down = link[(link["dir"] == "down") & (link["kind"] == "frame_lost")]
    assert len(down) and (down["reason"] == "collision").all(), "a loss-free channel loses only to collisions"
    fig = plot.multilayer_figure(run)
    lines = lines_by_label(fig)
    collisions = next(v for k, v in lines.items() if k.startswith("link: collisions"))
    assert len(collisions.get_xdata()) == len(down)
    retx = next(v for k, v in lines.items() if k.startswith("link frame retransmissions"))
    assert len(retx.get_xdata()) == len(down), "every collided frame was sent again"


def test_a_small_transfer_from_the_responder_is_titled_and_ticked_readably(tmp_path: Path) -> None:
    """The title names the connection as every text does and the direction of its data
    (here from the responder, b_to_a), and a transfer of a few hundred bytes gets distinct
    tick labels (they read "0, 0, 1, 1" in kB before)."""
    from pcapgen import ACK, PSH, SYN, TcpConversation

    conversation = TcpConversation()
    seg, cap = conversation.seg, conversation.capture

    seg(0.000, True, 100, 0, SYN)
    seg(0.010, False, 500, 101, SYN | ACK)
    seg(0.020, True, 101, 501, ACK)
    for k in range(5):
        seg(0.030 + 0.01 * k, False, 501 + 100 * k, 101, ACK | PSH, 100)
        seg(0.035 + 0.01 * k, True, 101, 601 + 100 * k, ACK)
    run = views.load(cap.write(tmp_path / "small.pcap"))
    fig = plot.tsg_figure(run, 0)
    ax = fig.axes[0]
    assert "connection 0 (198.18.0.1:40000 → 198.18.1.1:80), data b_to_a" in ax.get_title(loc="left")
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert len(labels) >= 3 and len(set(labels)) == len(labels), labels


def test_the_multilayer_view_of_a_manet_shows_the_routing_under_tcp(tmp_path: Path) -> None:
    """A network routed by DSR: route errors reaching the sending node, its route
    discoveries and the flow's no-route drops, counted as routes.jsonl and link.jsonl
    hold them, on the TCP time axis; drawn without error."""
    bundle = tmp_path / "manet"
    airtrace.simulate(
        ROOT / "scenarios" / "holland_vaidya_manet.toml",
        bundle,
        set={"network.captures": ["n0", "n1"], "network.mobility.pattern": 2, "duration": "60 s"},
    )
    run = views.load(bundle)
    assert run.sender_name == "n0"
    conn = run.main_connection()
    layers = views.multilayer(run, conn)
    routes = [json.loads(line) for line in (bundle / "routes.jsonl").read_text().splitlines()]
    errors = [r for r in routes if r["event"] == "error_received" and r["node"] == "n0"]
    learned = [r for r in routes if r["event"] == "route_learned" and r["node"] == "n0"]
    assert len(layers["route_error"]) == len(errors) >= 1
    assert len(layers["route_learned"]) == len(learned) >= 1
    drops = [json.loads(line) for line in (bundle / "link.jsonl").read_text().splitlines()]
    no_route = [d for d in drops if d["reason"] in ("no_route", "send_buffer_timeout") and d["flow"] == 0]
    assert len(layers["no_route"]) == len(no_route)
    written = plot.plot(bundle, tmp_path / "m.png", kind="multilayer")
    assert written and Path(written[0]).stat().st_size > 10_000


def test_a_lone_capture_taken_at_the_receiver_is_drawn_as_the_receiver_s() -> None:
    """The bundled samples are one transfer captured at both ends: alone, the receiver's
    capture is the TcpRcv layer of the multi-layer view (it was labelled TcpSnd), the
    sender's stays TcpSnd (issue 17 item 1)."""
    pcaps = ROOT / "testdata" / "pcaps"
    at_receiver = views.multilayer(views.load([pcaps / "sample-receiver.pcapng"]), 1)
    assert "TcpRcv_data" in at_receiver and "TcpSnd_data" not in at_receiver
    assert at_receiver["TcpRcv_data"].label == "TcpRcv data"
    at_sender = views.multilayer(views.load([pcaps / "sample-sender.pcapng"]), 1)
    assert "TcpSnd_data" in at_sender and "TcpRcv_data" not in at_sender
    fig = plot.multilayer_figure(views.load([pcaps / "sample-receiver.pcapng"]))
    assert any(k.startswith("TcpRcv data") for k in lines_by_label(fig))


def test_a_receiver_capture_draws_no_sender_rto_and_no_cwnd_through_its_stall() -> None:
    """zeek_206_example_b sat at the receiver of a download that stalled 65 s in the
    sender's timeouts: its RTT samples are the receiver's own ACK delay (about 1 ms), so
    an RFC 6298 RTO computed from them is no timer the sender ran, and its bytes in
    flight stay at 124 kB through the stall, which no sender's window did after a
    timeout (issue 17 item 1). At the sender the views keep both."""
    run = views.load([CORPUS / "zeek_206_example_b.pcap"])
    conn = run.main_connection()
    assert run.at_receiver(conn)
    rtt = views.rtt(run, conn)
    assert "rto" not in rtt and "srtt" not in rtt
    assert 0 < float(rtt["ack_delay"].y.max()) < 0.02 < float(rtt["rtt"].y.min())
    assert views.cwnd(run, conn) == {}
    labels = lines_by_label(plot.rtt_figure(run, conn))
    assert not any("RTO (" in k or "SRTT" in k for k in labels)
    fig = plot.cwnd_figure(run, conn)
    assert not fig.axes[0].get_lines()
    assert any(views.NOT_AT_SENDER in t.get_text() for t in fig.axes[0].texts)
    assert not any("cwnd" in k for k in lines_by_label(plot.multilayer_figure(run, conn)))
    at_sender = views.load([ROOT / "testdata" / "pcaps" / "sample-sender.pcapng"])
    assert "rto" in views.rtt(at_sender, 1) and "cwnd" in views.cwnd(at_sender, 1)


def test_utilization_counts_the_timeout_silences_the_diagnosis_counts() -> None:
    """zeek_206_example_b: the diagnosis finds 65 s (79 %) of the connection lost to
    timeouts; the utilization read 87 % (link idle 0.5 s), because the silence after
    the last ACK had no ACK to end it. Over the same span (the connection's duration)
    every timeout silence is idle time, so the utilization is at most what the
    timeouts leave (issue 17 item 1)."""
    capture = CORPUS / "zeek_206_example_b.pcap"
    run = views.load([capture])
    conn = run.main_connection()
    u = views.utilization(run, conn)
    timeouts = [f for f in airtrace.diagnose(capture) if f.kind == "timeout_backoff" and f.connection == conn]
    lost = sum(f.cost_s for f in timeouts)
    assert lost > 60
    assert u.duration_s == pytest.approx(run.connections.loc[conn, "duration_s"])
    for f in timeouts:
        covered = sum(max(0.0, min(b, f.end_s) - max(a, f.start_s)) for a, b in u.idle_spans)
        assert covered >= 0.95 * (f.end_s - f.start_s), f
    assert u.idle_s >= lost
    assert u.utilization <= 1 - lost / u.duration_s
    assert u.idle_source.endswith("at the receiver")


# ---- figures that do not lie (issue 17 item 3) ------------------------------------------


def _scale(label: str) -> float:
    """The unit an axis label names: 1e3 for "(kB)" or "(kbit/s)", else 1."""
    import re

    m = re.search(r"\(([GMk]?)(?:B|bit/s)\)$", label)
    return {"G": 1e9, "M": 1e6, "k": 1e3, "": 1.0}[m[1]] if m else 1.0


def assert_ticks_are_the_values(fig) -> int:  # type: ignore[no-untyped-def]
    """Every numeric tick label, times its axis' unit, is the tick's value to the last
    digit shown; no offset or exponent beside an axis; no two labels alike. Returns how
    many labels were checked."""
    fig.canvas.draw()
    checked = 0
    for ax in fig.axes:
        for axis, limits, label in ((ax.xaxis, ax.get_xlim(), ax.get_xlabel()), (ax.yaxis, ax.get_ylim(), ax.get_ylabel())):
            lo, hi = sorted(limits)
            pairs = [(v, t.get_text()) for v, t in zip(axis.get_majorticklocs(), axis.get_ticklabels())
                     if lo <= v <= hi and t.get_text()]
            if not pairs or not all(p[1].replace(",", "").replace("−", "-").replace(".", "", 1).lstrip("-").isdigit() for p in pairs):
                continue  # category labels (the utilization figure's connections)
            assert axis.get_offset_text().get_text() == "", (label, axis.get_offset_text().get_text())
            scale = _scale(label)
            texts = [t for _, t in pairs]
            assert len(set(texts)) == len(texts), (label, texts)
            for v, t in pairs:
                shown = float(t.replace(",", "").replace("−", "-"))
                decimals = len(t.split(".")[1]) if "." in t else 0
                assert abs(shown * scale - v) <= 0.5 * 10**-decimals * scale + 1e-9 * abs(v), (label, v, t)
                checked += 1
    return checked


@pytest.mark.parametrize("time", [None, (120.0, 120.004), (20.0, 30.0)], ids=["whole", "4 ms at 120 s", "10 s"])
@pytest.mark.parametrize("kind", plot.KINDS)
def test_tick_labels_are_the_values_at_the_ticks(bursty: views.Run, kind: str, time: tuple[float, float] | None) -> None:
    fig = plot.figure(bursty, kind, 0, time)
    if time is not None and kind != "utilization":  # as plot.plot zooms (utilization has no time axis)
        for ax in fig.axes:
            ax.set_xlim(*time)
    assert assert_ticks_are_the_values(fig) >= 4


def steady_flow(path: Path) -> Path:
    """1000-byte segments every 12 ms for 10 s, each ACKed 5 ms later."""
    from pcapgen import ACK, SYN, TcpConversation

    conversation = TcpConversation()
    seg, cap = conversation.seg, conversation.capture

    seg(0.000, True, 100, 0, SYN)
    seg(0.001, False, 500, 101, SYN | ACK)
    seg(0.002, True, 101, 501, ACK)
    for k in range(834):
        seg(0.010 + 0.012 * k, True, 101 + 1000 * k, 501, ACK, 1000)
        seg(0.015 + 0.012 * k, False, 501, 101 + 1000 * (k + 1), ACK)
    return cap.write(path)


def test_throughput_bins_do_not_alias_against_a_steady_flow(tmp_path: Path) -> None:
    """A flow at exactly 1000 B per 12 ms is 667 kbit/s in every bin; bins of 10 s / 200
    = 50 ms (4.17 packets) read 640 and 800 kbit/s by turns."""
    run = views.load(steady_flow(tmp_path / "steady.pcap"))
    tp = views.throughput(run, 0)
    inner = tp["sent"].y[1:-1]
    assert inner.min() > 0 and inner.max() / inner.min() < 1.001, (inner.min(), inner.max())
    assert inner.mean() == pytest.approx(1000 * 8 / 0.012, rel=0.001)
    assert "median packet spacing" in tp["sent"].label
    fig = plot.throughput_figure(run, 0)
    assert "mean over 0.048 s bins" in fig.axes[0].get_ylabel()


def drawn(fig):  # type: ignore[no-untyped-def]
    """The figure drawn on an Agg canvas; its renderer, for the extents of what was drawn."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _overlap(a, b) -> bool:  # type: ignore[no-untyped-def]
    return a.x0 < b.x1 - 0.5 and b.x0 < a.x1 - 0.5 and a.y0 < b.y1 - 0.5 and b.y0 < a.y1 - 0.5


@pytest.mark.parametrize("kind", plot.KINDS)
def test_legends_and_boxes_hide_no_data(bursty: views.Run, rlp: views.Run, kind: str) -> None:
    """Each legend and text box lies outside every plotting area, and none on another."""
    for run in (bursty, rlp):
        fig = plot.figure(run, kind)
        r = drawn(fig)
        boxes = [ax.get_legend().get_window_extent(r) for ax in fig.axes if ax.get_legend() is not None]
        boxes += [t.get_bbox_patch().get_window_extent(r) for ax in fig.axes for t in ax.texts if t.get_bbox_patch()]
        assert boxes, kind
        areas = [ax.get_window_extent(r) for ax in fig.axes]
        for box in boxes:
            assert not any(_overlap(box, area) for area in areas), (kind, box, areas)
        for i, a in enumerate(boxes):
            assert not any(_overlap(a, b) for b in boxes[i + 1:]), (kind, a)


@pytest.mark.parametrize("kind", ["multilayer", "tsg"])
def test_a_long_run_marks_and_lists_its_longest_idle_spans(bursty: views.Run, kind: str) -> None:
    """180 s with idle spans of a fraction of a second: each would be a hairline. The
    longest, one per place, are drawn at least SEEN_INCHES wide, numbered above the plot
    (the numbers apart, the title clear of them) and listed with their times; a 4 s
    window, where they can be seen, gets no such marks."""
    fig = plot.figure(bursty, kind, 0)
    r = drawn(fig)
    ax = fig.axes[0]
    spans = views.utilization(bursty, 0).idle_spans
    numbers = sorted((t for t in ax.texts if t.get_text().isdigit()), key=lambda t: int(t.get_text()))
    assert [int(t.get_text()) for t in numbers] == list(range(1, plot.MAX_ANNOTATIONS + 1))
    boxes = [t.get_window_extent(r) for t in numbers] + [ax.title.get_window_extent(r)]
    assert not any(_overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]), "labels do not overlap"
    marks = [p for p in ax.patches if p.get_alpha() == pytest.approx(0.35)]
    assert len(marks) == len(numbers)
    assert all(m.get_window_extent(r).width >= plot.SEEN_INCHES * fig.dpi * 0.95 for m in marks)
    listed = "\n".join(t.get_text() for t in ax.texts)
    found = [tuple(map(float, m)) for m in re.findall(r"^\d: ([\d.]+)–([\d.]+) s", listed, re.M)]
    assert len(found) == len(numbers) and found == sorted(found)
    longest = max(b - a for a, b in spans)
    assert any(b - a == pytest.approx(longest, abs=0.01) for a, b in found), "the longest of all is one of them"
    zoomed = plot.figure(bursty, kind, 0, (20.0, 24.0))
    assert not [t for t in zoomed.axes[0].texts if t.get_text().isdigit()]


def test_a_link_hardly_idle_gets_no_marks(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The overbuffered slow link is idle 0.9 s of 110 s: hairline spans, but nothing to
    point at."""
    run = views.load(bundle_of("overbuffered_slow", tmp_path_factory))
    u = views.utilization(run, 0)
    assert 0 < u.idle_s < plot.IDLE_WORTH * u.duration_s
    fig = plot.figure(run, "multilayer", 0)
    assert not [t for t in fig.axes[0].texts if t.get_text().isdigit()]
