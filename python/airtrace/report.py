"""`airtrace report BUNDLE|FILES -o report.html`: one self-contained HTML file.

It opens with no network: the viewer (data/report.js, hand-written canvas code, no
library) and the data are inlined. Sections: the connection table, utilization,
findings (only when some are given), and interactive plots per connection on a shared
time axis (drag to zoom into a time range, shift-drag to pan, wheel to zoom, double-click
to reset). Series travel as little-endian arrays (time as uint32 ticks, values as
float32), zlib-compressed and base64-encoded; the browser inflates them with
DecompressionStream.

Findings (from the diagnosis, or any caller) are dicts:

    {"title": "Link reset flushed 5 segments", "severity": "problem",   # info | warning | problem
     "conn": 0, "start_s": 18.2, "end_s": 31.0,                         # optional: the time span
     "detail": "text", "evidence_frames": [812, 813]}                   # optional
"""

from __future__ import annotations

import base64
import html
import json
import os
import zlib
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from airtrace import views
from airtrace.atomic import write_bytes_atomically
from airtrace.views import Run, Series

if TYPE_CHECKING:
    import numpy as np

MAX_CONNECTIONS = 16  # connections that get plots (the busiest); the table lists all
COLORS = {f"C{i}": c for i, c in enumerate(
    ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
)} | {"k": "#000000"}


class _Blob:
    """Collects arrays into one buffer (4-byte aligned) and remembers their offsets."""

    def __init__(self, x0: float, xscale: float) -> None:
        self.parts: list[bytes] = []
        self.size = 0
        self.x0, self.xscale = x0, xscale

    def add(self, arr: np.ndarray) -> int:
        data = arr.tobytes()
        off = self.size
        self.parts.append(data)
        self.size += len(data)
        return off

    def series(self, s: Series, **extra: Any) -> dict[str, Any]:
        """The page's description of a series, its arrays appended to the blob."""
        import numpy as np

        order = np.argsort(s.x, kind="stable") if len(s) and np.any(np.diff(s.x) < 0) else None
        x = s.x if order is None else s.x[order]
        y = s.y if order is None else s.y[order]
        ticks = np.clip(np.round((x - self.x0) / self.xscale), 0, 2**32 - 1).astype("<u4")
        out: dict[str, Any] = {
            "label": s.label, "n": int(len(s)), "style": s.style, "color": COLORS.get(s.color, s.color),
            "marker": {".": "dot"}.get(s.marker, s.marker), "important": s.important,
            "x": self.add(ticks), "y": self.add(np.asarray(y, dtype="<f4")), "y2": None,
        }
        if s.y2 is not None:
            y2 = s.y2 if order is None else s.y2[order]
            out["y2"] = self.add(np.asarray(y2, dtype="<f4"))
        out.update(extra)
        return out

    def encoded(self) -> str:
        return base64.b64encode(zlib.compress(b"".join(self.parts), 6)).decode("ascii")


def _panels(run: Run, conn: int, blob: _Blob) -> list[dict[str, Any]]:
    """The plots of one connection, in the order the page shows them."""
    import numpy as np

    panels = []
    if run.link is not None or run.receiver_name:
        layers = views.multilayer(run, conn)
        series = []
        shifts = {"link_data": 1, "link_retx": 1, "link_collision": 1, "TcpRcv_data": -1, "TcpRcv_ack": -1}
        colors = {"TcpSnd_data": "C0", "TcpSnd_ack": "C1", "TcpRcv_data": "C4", "TcpRcv_ack": "C5", "link_data": "C2", "link_retx": "C3",
                  "link_collision": "m"}
        keys = ("link_data", "link_retx", "link_collision", "TcpSnd_data", "TcpSnd_ack", "TcpRcv_data", "TcpRcv_ack", "link_reset")
        for key in keys:
            s = layers.get(key)
            if s is None:
                continue
            recolored = Series(s.label, s.x, s.y, s.style, colors.get(key, s.color), None, s.marker, s.important)
            series.append(blob.series(recolored, shift=shifts.get(key, 0)))
        panels.append({"id": "multilayer", "title": "Multi-layer trace: link, TCP sender and TCP receiver (offset so they do not overlap)",
                       "ylabel": "sequence (bytes)", "offset": True, "series": series})
    tsg = views.tsg(run, conn)
    series = [blob.series(s) for k, s in tsg.items() if k != "timeouts"]
    to = tsg.get("timeouts")
    if to is not None and len(to):
        series.append(blob.series(Series("RTO expiry", to.x, to.y, "points", "C3", None, "v", True)))
    panels.append({"id": "tsg", "title": f"Time/sequence at {run.sender_name} (tcptrace style)", "ylabel": "sequence (bytes)", "series": series})
    rtt = views.rtt(run, conn)
    if rtt:
        panels.append({"id": "rtt", "title": "RTT and RTO", "ylabel": "seconds", "zero": True,
                       "series": [blob.series(s) for s in rtt.values()]})
    cw = views.cwnd(run, conn)
    inferred = any(s.note == "inferred" for s in cw.values())
    panels.append({"id": "cwnd", "title": "Congestion window" + (" (inferred from bytes in flight)" if inferred else " and ssthresh (sender state log)"),
                   "ylabel": "bytes", "zero": True, "series": [blob.series(s) for s in cw.values()]})
    if run.link is not None:
        queue = views.link_queue(run)
        if len(queue):
            panels.append({"id": "queue", "title": "Link queue (forward direction, from the link log)", "ylabel": "packets",
                           "zero": True, "series": [blob.series(Series("link queue (packets)", queue.x, queue.y, "step", queue.color))]})
    tp = views.throughput(run, conn, bins=400)
    if tp:
        panels.append({"id": "throughput", "title": "Throughput", "ylabel": "bit/s", "zero": True,
                       "series": [blob.series(Series(s.label, s.x, np.asarray(s.y), s.style, s.color)) for s in tp.values()]})
    for p in panels:
        p["series"] = [s for s in p["series"] if s["n"] > 0]
    return [p for p in panels if p["series"]]


def _overview(cviews: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """With several connections: one time/sequence panel of every connection's data segments,
    drawn from the same arrays as their own panels (no extra bytes)."""
    series = []
    palette = list(COLORS.values())[:10]
    for i, v in enumerate(cviews):
        tsg = next((p for p in v["panels"] if p["id"] == "tsg"), None)
        seg = next((s for s in tsg["series"] if s["label"] == "data segments"), None) if tsg else None
        if seg is not None and seg["n"]:
            series.append(dict(seg, label=f"conn {v['conn']}", y2=None, style="points", color=palette[i % 10], important=False))
    if len(series) < 2:
        return []
    return [{"id": "overview", "title": "All connections: data segments (first byte, relative sequence number)",
             "ylabel": "sequence (bytes)", "series": series}]


def _cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "–"
    if isinstance(v, float):
        return f"{v:,.3f}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return html.escape(str(v))


def _connection_table(run: Run, utils: Mapping[int, views.Utilization]) -> str:
    c = run.connections
    cols = [
        ("id", "conn"), ("a", "from (a)"), ("b", "to (b)"), ("duration_s", "duration s"), ("state", "state"),
        ("a_to_b.data_bytes", "a→b data bytes"), ("a_to_b.goodput_bps", "a→b goodput bit/s"),
        ("a_to_b.retransmitted_packets", "a→b retx"), ("a_to_b.timeout_retransmissions", "to"),
        ("a_to_b.fast_retransmissions", "fr"), ("a_to_b.sack_retransmissions", "sack"), ("a_to_b.timeouts", "RTOs"),
        ("a_to_b.max_backoff", "max backoff"), ("a_to_b.rtt.min_s", "RTT min s"), ("a_to_b.rtt.max_s", "RTT max s"),
        ("b_to_a.data_bytes", "b→a data bytes"), ("b_to_a.retransmitted_packets", "b→a retx"),
    ]
    cols = [(k, h) for k, h in cols if k in c.columns]
    head = "".join(f"<th>{html.escape(h)}</th>" for _, h in cols) + "<th>utilization</th>"
    rows = []
    for _, r in c.iterrows():
        u = utils.get(int(r["id"]))
        util = f"{u.utilization:.0%}" if u else "–"
        cells = "".join(f"<td>{_cell(r[k].item() if hasattr(r[k], 'item') else r[k])}</td>" for k, _ in cols)
        rows.append(f'<tr data-conn="{int(r["id"])}">{cells}<td>{util}</td></tr>')
    return f'<table id="conns"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _utilization_section(utils: Iterable[views.Utilization]) -> str:
    rows = []
    for u in utils:
        rows.append(
            f"<tr><td>{u.conn}</td><td>{html.escape(u.label)}</td><td><b>{u.utilization:.0%}</b></td>"
            f"<td>{u.idle_s:,.2f} s of {u.duration_s:,.2f} s ({u.idle_fraction:.0%}) <small>{html.escape(u.idle_source)}</small></td>"
            f"<td>{u.resent_bytes:,} of {u.data_bytes:,} bytes ({u.resent_fraction:.1%})</td></tr>"
        )
    return (
        "<table id=\"util\"><thead><tr><th>conn</th><th></th><th>utilization</th><th>link idle while the sender had data</th>"
        f"<th>bytes sent more than once</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _from_diagnosis(f: Mapping[str, Any]) -> Mapping[str, Any]:
    """A finding of `airtrace.diagnose` (docs/diagnosis.md) in the report's own form."""
    if "kind" not in f:
        return f
    share = float(f.get("throughput_share", 0.0))
    cost = float(f.get("cost_s", 0.0))
    title = f["kind"] + (f" — {cost:.2f} s lost ({share:.0%} of the connection)" if cost > 0 else "")
    return {
        "title": title,
        "severity": "problem" if share >= 0.05 else "warning" if cost > 0 else "info",
        "conn": f.get("connection"),
        "start_s": f.get("start_s"),
        "end_s": f.get("end_s"),
        "detail": f"{f.get('explanation', '')} Fix: {f.get('fix', '')}",
        "evidence_frames": f.get("evidence", []),
    }


def _findings_section(findings: Sequence[Mapping[str, Any]] | None) -> str:
    if not findings:
        return ""
    items = []
    for f in map(_from_diagnosis, findings):
        sev = html.escape(str(f.get("severity", "info")))
        span = ""
        if f.get("start_s") is not None:
            a, b = float(f["start_s"]), float(f.get("end_s", f["start_s"]))
            pad = max((b - a) * 0.1, 0.05)
            zoom = html.escape(json.dumps([a - pad, b + pad, f.get("conn")]))
            span = f' <a href="#" data-zoom="{zoom}">{a:.3f}–{b:.3f} s</a>'
        conn = f" · connection {f['conn']}" if f.get("conn") is not None else ""
        ev = f.get("evidence_frames") or []
        evidence = f"<div class=\"ev\">evidence: frames {', '.join(map(str, ev[:20]))}{' …' if len(ev) > 20 else ''}</div>" if ev else ""
        items.append(
            f'<li class="finding {sev}"><span class="sev">{sev}</span> <b>{html.escape(str(f.get("title", "")))}</b>'
            f"{conn}{span}<div>{html.escape(str(f.get('detail', '')))}</div>{evidence}</li>"
        )
    return f'<section id="findings"><h2>Findings</h2><ul>{"".join(items)}</ul></section>'


def build(run: Run, *, findings: Sequence[Mapping[str, Any]] | None = None, max_connections: int = MAX_CONNECTIONS) -> str:
    """The report of a run as one HTML string."""
    conns = run.connections
    total = conns["a_to_b.data_bytes"] + conns["b_to_a.data_bytes"] if len(conns) else []
    chosen = [int(conns.loc[i, "id"]) for i in (total.sort_values(ascending=False).index[:max_connections] if len(conns) else [])]
    chosen = [c for c in chosen if total[c] > 0] or chosen[:1]
    # One time origin and tick for every series of the page.
    lo = min((float(run.packets(n)["t"].min()) for n in run.captures if len(run.packets(n))), default=0.0)
    hi = max((float(run.packets(n)["t"].max()) for n in run.captures if len(run.packets(n))), default=1.0)
    if run.link is not None:
        lo, hi = min(lo, float(run.link["t"].min())), max(hi, float(run.link["t"].max()))
    x0 = lo - 1.0
    span = hi - x0 + 1.0
    xscale = 1e-6 if span < 4000 else 1e-3 if span < 4e6 else 1.0
    blob = _Blob(x0, xscale)
    utils = {c: views.utilization(run, c) for c in chosen}
    cviews = [{"conn": c, "panels": _panels(run, c, blob)} for c in chosen]
    meta = {"title": run.title, "x0": x0, "xscale": xscale, "connections_views": cviews, "overview": _overview(cviews)}
    js = resources.files("airtrace").joinpath("data/report.js").read_text()
    css = resources.files("airtrace").joinpath("data/report.css").read_text()
    from airtrace import __version__

    title = html.escape(run.title)
    meta_json = json.dumps(meta, separators=(",", ":")).replace("</", "<\\/")
    sources = "".join(f"<li><b>{html.escape(n)}</b>: {html.escape(p)}</li>" for n, p in run.captures.items())
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>airtrace report: {title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{css}</style></head>
<body>
<header><h1>airtrace report: {title}</h1><div class="sub">airtrace {html.escape(__version__)} · {len(conns)} TCP connection{'s' if len(conns) != 1 else ''}</div>
<details><summary>captures</summary><ul>{sources}</ul></details></header>
{_findings_section(findings)}
<section><h2>Connections</h2><p class="hint">Click a row to plot that connection.</p>{_connection_table(run, utils)}</section>
<section><h2>Utilization</h2><p class="hint">Ludwig et al.: a sender uses a link fully unless the link sits idle while it has data, or it sends bytes more than once.</p>{_utilization_section(utils.values())}</section>
<section id="plots"><h2>Plots <span id="range"></span> <button id="reset">reset zoom</button></h2>
<p class="hint">Drag across a plot to zoom into a time range · shift-drag (or right-drag) to pan · wheel to zoom · double-click to reset · click a legend entry to hide it. All plots share the time axis. Every retransmission, timeout and reset is drawn even when the rest is thinned to one stroke per pixel column.</p>
<div id="panels"></div></section>
<script type="application/json" id="airtrace-meta">{meta_json}</script>
<script type="application/octet-stream" id="airtrace-blob">{blob.encoded()}</script>
<script>{js}</script>
</body></html>
"""


def report(
    source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Run,
    out: str | os.PathLike[str],
    *,
    findings: Sequence[Mapping[str, Any]] | None = None,
    max_connections: int = MAX_CONNECTIONS,
) -> str:
    """Write the HTML report of a bundle or captures to `out`; returns its path."""
    run = source if isinstance(source, Run) else views.load(source)
    text = build(run, findings=findings, max_connections=max_connections)
    out = os.fspath(out)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    write_bytes_atomically(Path(out), text.encode("utf-8"))
    return out
