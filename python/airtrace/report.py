"""`airtrace report BUNDLE|FILES -o report.html`: one self-contained HTML file.

It opens with no network: the viewer (data/report.js, hand-written canvas code, no
library) and the data are inlined. Sections: the connection table (both directions of
each connection), utilization, findings (only when some are given), and interactive
plots per connection on a shared time axis (drag to zoom into a time range, shift-drag
to pan, wheel to zoom, double-click to reset). Series travel as little-endian arrays
(time as uint32 ticks, values as float32), zlib-compressed and base64-encoded; the
browser inflates them with DecompressionStream.

It is a tool to look with (issue 17 item 2): it opens on the span where the chosen
connection's data flowed (`focus`, not the whole capture with its stray frames);
clicking a finding zooms to its span on its connection, its evidence frames are links
that highlight those packets, and clicking a connection row plots that connection on its
own span, the plots' heading naming it. The file stays under MAX_REPORT_BYTES: series
too long for it are thinned to their envelope (every retransmission, timeout and reset
kept), and their legend says so.

Findings are `airtrace.finding.Finding`s, as `airtrace.diagnose` gives them (or
`Finding.from_dict` of what `airtrace diagnose --json` writes): the report shows each
as it is, its title and severity its own.
"""

from __future__ import annotations

import base64
import html
import json
import os
import zlib
from importlib import resources
from pathlib import Path
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence, TextIO

from airtrace import views
from airtrace.atomic import write_bytes_atomically
from airtrace.finding import Finding
from airtrace.views import Run, Series
from airtrace.wording import connection_name, si

if TYPE_CHECKING:
    import numpy as np

MAX_CONNECTIONS = 16  # connections that get plots (the busiest); the table lists all
#: The report's size cap: a browser opens 50 MB of HTML in seconds, not much more.
MAX_REPORT_BYTES = 50_000_000
#: Bytes kept for the page's text besides the series (tables, findings, viewer).
PAGE_BYTES = 2_000_000
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


def _nbytes(s: Series) -> int:
    """Bytes a series takes in the blob: a uint32 tick and a float32 (two with y2) a point."""
    return len(s) * (12 if s.y2 is not None else 8)


def thinned(s: Series, points: int) -> Series:
    """`s` cut to about `points` points that keep its envelope: in each of points/4 equal
    time slices, its first, last, lowest and highest point (a gap stays a gap, a peak a
    peak). Labelled with what was kept."""
    import numpy as np

    if len(s) <= points or s.important:
        return s
    order = np.argsort(s.x, kind="stable")
    x, y = s.x[order], s.y[order]
    top = y if s.y2 is None else s.y2[order]
    slices = max(points // 4, 1)
    span = float(x[-1] - x[0]) or 1.0
    b = np.minimum(((x - x[0]) / span * slices).astype(np.int64), slices - 1)
    firsts = np.flatnonzero(np.diff(b, prepend=-1))
    lasts = np.concatenate([firsts[1:] - 1, [len(b) - 1]])
    yk = np.where(np.isnan(y), np.inf, y)
    lows = np.lexsort((yk, b))[firsts]  # sorted by slice, then y: the first of each slice is its lowest
    tk = np.where(np.isnan(top), -np.inf, top)
    highs = np.lexsort((-tk, b))[firsts]
    keep = order[np.unique(np.concatenate([firsts, lasts, lows, highs]))]
    keep.sort(kind="stable")
    label = f"{s.label} (envelope: {len(keep):,} of {len(s):,} points, for the file size)"
    return Series(label, s.x[keep], s.y[keep], s.style, s.color, None if s.y2 is None else s.y2[keep], s.marker,
                  s.important, s.note)


def _idle_series(util: views.Utilization) -> Series:
    """The spans the link sat idle while the sender had data: start, and length in y."""
    import numpy as np

    a = np.array([x for x, _ in util.idle_spans], dtype=float)
    d = np.array([y - x for x, y in util.idle_spans], dtype=float)
    return Series(f"link idle while the sender had data ({util.idle_source})", a, d, "spans", "C3", important=True)


def _timeout_series(run: Run, conn: int) -> Series | None:
    to = views.tsg(run, conn).get("timeouts")
    if to is None or not len(to):
        return None
    return Series("RTO expiry", to.x, to.y, "points", "C3", None, "v", True)


def _panels(run: Run, conn: int, util: views.Utilization) -> list[dict[str, Any]]:
    """The plots of one connection, in the order the page shows them; each panel's
    `series` are (Series, extra fields) pairs, put in the blob later."""
    import numpy as np

    panels: list[dict[str, Any]] = []
    timeouts = _timeout_series(run, conn)
    idle = _idle_series(util)
    if run.link is not None or run.receiver_name:
        layers = views.multilayer(run, conn)
        series: list[tuple[Series, dict[str, Any]]] = []
        shifts = {"link_data": 1, "link_retx": 1, "link_collision": 1, "TcpRcv_data": -1, "TcpRcv_ack": -1}
        colors = {"TcpSnd_data": "C0", "TcpSnd_ack": "C1", "TcpRcv_data": "C4", "TcpRcv_ack": "C5", "link_data": "C2", "link_retx": "C3",
                  "link_collision": "m"}
        keys = ("link_data", "link_retx", "link_collision", "TcpSnd_data", "TcpSnd_ack", "TcpRcv_data", "TcpRcv_ack", "link_reset")
        for key in keys:
            s = layers.get(key)
            if s is None:
                continue
            recolored = Series(s.label, s.x, s.y, s.style, colors.get(key, s.color), None, s.marker, s.important)
            series.append((recolored, {"shift": shifts.get(key, 0)}))
        # As on the PNG: the timer expiries on the sender's curve, the idle link shaded.
        if timeouts is not None:
            series.append((timeouts, {"shift": 0}))
        series.append((idle, {}))
        panels.append({"id": "multilayer", "title": "Multi-layer trace: link, TCP sender and TCP receiver (offset so they do not overlap)",
                       "ylabel": "sequence (bytes)", "offset": True, "series": series})
    tsg = views.tsg(run, conn)
    series = [(s, {}) for k, s in tsg.items() if k != "timeouts"]
    if timeouts is not None:
        series.append((timeouts, {}))
    series.append((idle, {}))
    panels.append({"id": "tsg", "title": f"Time/sequence at {run.sender_name} (tcptrace style)", "ylabel": "sequence (bytes)", "series": series})
    rtt = views.rtt(run, conn)
    if rtt:
        panels.append({"id": "rtt", "title": views.rtt_title(run, conn), "ylabel": "seconds", "zero": True,
                       "series": [(s, {}) for s in rtt.values()]})
    cw = views.cwnd(run, conn)
    inferred = any(s.note == "inferred" for s in cw.values())
    panels.append({"id": "cwnd", "title": "Congestion window" + (" (inferred from bytes in flight)" if inferred else " and ssthresh (sender state log)"),
                   "ylabel": "bytes", "zero": True, "series": [(s, {}) for s in cw.values()]})
    if run.link is not None:
        queue = views.link_queue(run)
        if len(queue):
            panels.append({"id": "queue", "title": "Link queue (forward direction, from the link log)", "ylabel": "packets",
                           "zero": True, "series": [(Series("link queue (packets)", queue.x, queue.y, "step", queue.color), {})]})
    tp = views.throughput(run, conn, bins=400)
    if tp:
        panels.append({"id": "throughput", "title": "Throughput", "ylabel": "bit/s", "zero": True,
                       "series": [(Series(s.label, s.x, np.asarray(s.y), s.style, s.color), {}) for s in tp.values()]})
    for p in panels:
        p["series"] = [(s, e) for s, e in p["series"] if len(s) > 0]
    return [p for p in panels if p["series"]]


def _fit(cviews: list[dict[str, Any]], budget: int) -> None:
    """Thin the long series (never the important ones) so that every array together
    takes at most `budget` bytes: each keeps the same share of its points."""
    seen: dict[int, Series] = {}
    for v in cviews:
        for p in v["panels"]:
            for s, _ in p["series"]:
                seen[id(s)] = s
    fixed = sum(_nbytes(s) for s in seen.values() if s.important)
    free = sum(_nbytes(s) for s in seen.values() if not s.important)
    if fixed + free <= budget or free == 0:
        return
    share = max(budget - fixed, 0) / free
    cut = {k: thinned(s, max(int(len(s) * share), 400)) for k, s in seen.items() if not s.important}
    for v in cviews:
        for p in v["panels"]:
            p["series"] = [(cut.get(id(s), s), e) for s, e in p["series"]]


def _encode(cviews: list[dict[str, Any]], blob: _Blob) -> None:
    """Each panel's series put in the blob (a series shared by panels, once)."""
    done: dict[int, dict[str, Any]] = {}
    for v in cviews:
        for p in v["panels"]:
            out = []
            for s, extra in p["series"]:
                if id(s) not in done:
                    done[id(s)] = blob.series(s)
                out.append(dict(done[id(s)], **extra))
            p["series"] = out


def _overview(cviews: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """With several connections: one time/sequence panel of every connection's data segments,
    drawn from the same arrays as their own panels (no extra bytes)."""
    series = []
    palette = list(COLORS.values())[:10]
    for i, v in enumerate(cviews):
        tsg = next((p for p in v["panels"] if p["id"] == "tsg"), None)
        seg = next((s for s in tsg["series"] if s["label"].startswith("data segments")), None) if tsg else None
        if seg is not None and seg["n"]:
            series.append(dict(seg, label=f"conn {v['conn']}", y2=None, style="points", color=palette[i % 10], important=False))
    if len(series) < 2:
        return []
    return [{"id": "overview", "title": "All connections: data segments (first byte, relative sequence number)",
             "ylabel": "sequence (bytes)", "series": series}]


def _lone_ends_cut(t: np.ndarray) -> np.ndarray:
    """Sorted times without the stray points at either end: a point farther from the
    rest than the rest's whole span (at most 1 % of the points, at least one, per end)."""
    most = max(1, len(t) // 100)
    lo, hi = 0, len(t)
    while lo < most and hi - lo > 2 and t[lo + 1] - t[lo] > t[hi - 1] - t[lo + 1]:
        lo += 1
    cut = 0
    while cut < most and hi - lo > 2 and t[hi - 1] - t[hi - 2] > t[hi - 2] - t[lo]:
        hi -= 1
        cut += 1
    return t[lo:hi]


def focus(run: Run, conn: int) -> tuple[float, float]:
    """The span the report opens on for connection `conn`: where its data segments are at
    the sender capture (all its packets if it carried no data), a stray frame far from
    the rest left out."""
    import numpy as np

    p = run.conn_in(run.sender_name, conn)
    data = p[p["seglen"].fillna(0) > 0]
    t = np.sort(views._np((data if len(data) else p)["t"]))
    t = t[np.isfinite(t)]
    if len(t) == 0:
        return (0.0, 1.0)
    t = _lone_ends_cut(t)
    return (float(t[0]), float(t[-1]))


def _cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "–"
    if isinstance(v, float):
        return f"{v:,.3f}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return html.escape(str(v))


#: The connection table's columns of one direction: (column after `a_to_b.`, heading).
DIRECTION_COLUMNS = (
    ("data_bytes", "data bytes"), ("goodput_bps", "goodput"), ("retransmitted_packets", "retx"),
    ("spurious_retransmissions", "spurious"), ("timeout_retransmissions", "by timeout"), ("fast_retransmissions", "fast"),
    ("sack_retransmissions", "SACK"), ("timeouts", "RTOs"), ("max_retransmit_wait_s", "max wait"),
    ("rtt.min_s", "RTT min"), ("rtt.max_s", "RTT max"),
)


def _value(row: Any, key: str) -> Any:
    """`row[key]`, reading `a_to_b.rtt.min_s` inside the `a_to_b.rtt` struct."""
    if key in row.index:
        v = row[key]
    else:
        head, _, leaf = key.rpartition(".")
        struct = row.get(head)
        # A direction without RTT samples has no RTT (the struct reads 0).
        v = struct.get(leaf) if isinstance(struct, Mapping) and struct.get("samples", 1) else None
    return v.item() if hasattr(v, "item") else v


def _direction_cell(key: str, v: Any) -> str:
    """One cell of a direction's row: rates in bit/s and times in s with SI prefixes."""
    if key.endswith("_bps"):
        return si(v, "bit/s")
    if key.endswith("_s"):
        return si(v, "s")
    return _cell(v)


def _connection_table(run: Run, utils: Mapping[int, views.Utilization]) -> str:
    """Each connection as a group of two rows, one per direction (a_to_b, then b_to_a)."""
    c = run.connections
    keys = [(k, h) for k, h in DIRECTION_COLUMNS if any(f"a_to_b.{k}".startswith(col) for col in c.columns)]
    head = ("<th>conn</th><th>from (a)</th><th>to (b)</th><th>duration s</th><th>state</th><th>direction</th>"
            + "".join(f"<th>{html.escape(h)}</th>" for _, h in keys) + "<th>utilization</th>")
    groups = []
    for _, r in c.iterrows():
        conn = int(r["id"])
        u = utils.get(conn)
        rows = []
        for side in ("a_to_b", "b_to_a"):
            cells = "".join(f"<td>{_direction_cell(k, _value(r, f'{side}.{k}'))}</td>" for k, _ in keys)
            data_dir = (run.data_dir(conn) == 0) == (side == "a_to_b")
            util = f"{u.utilization:.0%}" if u and data_dir else "–"
            shared = ""
            if side == "a_to_b":
                shared = "".join(
                    f'<td rowspan="2"{" class=addr" if k in ("a", "b") else ""}>{_cell(_value(r, k))}</td>'
                    for k in ("id", "a", "b", "duration_s", "state")
                )
            rows.append(f'<tr data-dir="{side}">{shared}<td>{side}</td>{cells}<td>{util}</td></tr>')
        groups.append(f'<tbody data-conn="{conn}">{"".join(rows)}</tbody>')
    return f'<table id="conns"><thead><tr>{head}</tr></thead>{"".join(groups)}</table>'


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


class _Frames:
    """Where the frames of the capture the findings refer to sit on the report's axes:
    time on the run's clock, the sequence number drawn, the connection."""

    def __init__(self, run: Run, name: str) -> None:
        p = run.packets(name)
        self.first_t = float(p["t"].iloc[0]) if len(p) else 0.0
        self.rows = p.drop_duplicates("frame").set_index("frame") if len(p) else p
        self.run = run

    def at(self, frame: int) -> dict[str, Any] | None:
        if frame not in self.rows.index:
            return None
        r = self.rows.loc[frame]
        conn = r.get("conn")
        conn = None if conn is None or conn != conn else int(conn)
        # Where the plots draw it: a data segment of the direction drawn at its sequence
        # number, anything else (an ACK, the other side's data) on the ACK line.
        data = conn is not None and r.get("dir") == self.run.data_dir(conn) and (r.get("seglen") or 0) > 0
        y = r["seq_rel"] if data else r.get("ack_rel")
        y = None if y is None or y != y else float(y)
        return {"frame": int(frame), "t": float(r["t"]), "y": y, "conn": conn}


@dataclass(frozen=True)
class _Placed:
    """A finding placed on the report's axes."""

    finding: Finding
    #: Its span on the run's clock, s.
    span: tuple[float, float]
    #: Its evidence frames the report found (`_Frames.at`).
    frames: list[dict[str, Any]]


def _findings(findings: Sequence[Finding] | None, frames: _Frames | None) -> list[_Placed]:
    """The findings with their spans on the run's clock (a finding's times count from
    the first packet of its capture) and their evidence frames placed."""
    shift = frames.first_t if frames is not None else 0.0
    return [
        _Placed(
            f,
            (f.start_s + shift, f.end_s + shift),
            [x for x in (frames.at(n) for n in f.evidence) if x] if frames else [],
        )
        for f in findings or []
    ]


def _findings_section(findings: list[_Placed], capture: str) -> str:
    if not findings:
        return ""
    items = []
    for i, p in enumerate(findings):
        f = p.finding
        sev = html.escape(f.severity)
        a, b = p.span
        span = f' <a href="#plots" data-finding="{i}">{a:.3f}–{b:.3f} s</a>'
        conn = f" · connection {f.connection}"
        ev = f.evidence
        placed = {x["frame"] for x in p.frames}
        links = ", ".join(
            f'<a href="#plots" data-finding="{i}" data-frame="{n}">{n}</a>' if n in placed else str(n) for n in ev[:20]
        )
        evidence = (f"<div class=\"ev\">evidence: frames {links}{' …' if len(ev) > 20 else ''} "
                    f"<small>of {html.escape(capture)}</small></div>") if ev else ""
        items.append(
            f'<li class="finding {sev}"><span class="sev">{sev}</span> <b>{html.escape(f.title)}</b>'
            f"{conn}{span}<div>{html.escape(f'{f.explanation} Fix: {f.fix}')}</div>{evidence}</li>"
        )
    return f'<section id="findings"><h2>Findings</h2><p class="hint">Click a time span to plot it; click a frame to highlight that packet.</p><ul>{"".join(items)}</ul></section>'


def _capture_name(run: Run, path: str | os.PathLike[str] | None) -> str:
    """The run's name of the capture at `path` (the sender capture when none is given or found)."""
    if path is not None:
        for name, p in run.captures.items():
            try:
                if os.path.samefile(p, path):
                    return name
            except OSError:
                continue
    return run.sender_name


def build(
    run: Run,
    *,
    findings: Sequence[Finding] | None = None,
    findings_capture: str | os.PathLike[str] | None = None,
    max_connections: int = MAX_CONNECTIONS,
    max_bytes: int = MAX_REPORT_BYTES,
    progress: TextIO | None = None,
) -> str:
    """The report of a run as one HTML string, at most about `max_bytes` long.
    `findings_capture` is the capture whose frames and times the findings refer to (the
    sender capture by default); `progress`, a stream to draw a progress bar on."""
    from airtrace.progress import Bar

    sizes = {n: _size(p) for n, p in run.captures.items()}
    bar = Bar(2 * sum(sizes.values()), progress)
    try:
        done = 0
        for name in run.captures:
            bar.phase(f"reading the {name} capture")
            run.packets(name)
            done += sizes[name]
            bar.to(done)
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
        utils, cviews = {}, []
        for i, c in enumerate(chosen):
            bar.phase(f"drawing connection {c} ({i + 1}/{len(chosen)})")
            utils[c] = views.utilization(run, c)
            cviews.append({"conn": c, "label": connection_name(conns.loc[c]), "focus": focus(run, c),
                           "panels": _panels(run, c, utils[c])})
            bar.to(done + sum(sizes.values()) * (i + 1) // len(chosen))
        bar.phase("compressing the series")
        _fit(cviews, (max_bytes - PAGE_BYTES) * 3 // 4)  # base64 makes 4 bytes of 3
        _encode(cviews, blob)
        capture = _capture_name(run, findings_capture)
        placed = _findings(findings, _Frames(run, capture) if findings else None)
        meta = {"title": run.title, "x0": x0, "xscale": xscale, "connections_views": cviews, "overview": _overview(cviews),
                "findings": [{"conn": p.finding.connection, "span": list(p.span), "frames": p.frames} for p in placed]}
        encoded = blob.encoded()
        bar.to(bar.total)
    finally:
        bar.close()
    js = resources.files("airtrace").joinpath("data/report.js").read_text()
    css = resources.files("airtrace").joinpath("data/report.css").read_text()
    from airtrace._core import __version__

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
{_findings_section(placed, capture)}
<section><h2>Connections</h2><p class="hint">Click a connection to plot it. Each has a row per direction.</p>{_connection_table(run, utils)}</section>
<section><h2>Utilization</h2><p class="hint">Ludwig et al.: a sender uses a link fully unless the link sits idle while it has data, or it sends bytes more than once.</p>{_utilization_section(utils.values())}</section>
<section id="plots"><h2>Plots: <span id="showing"></span> <span id="range"></span> <button id="reset">reset zoom</button> <button id="whole">whole capture</button></h2>
<p class="hint">Opens on the span where the connection's data flowed. Drag across a plot to zoom into a time range · shift-drag (or right-drag) to pan · wheel to zoom · double-click to reset · click a legend entry to hide it. All plots share the time axis. Every retransmission, timeout and reset is drawn even when the rest is thinned to one stroke per pixel column.</p>
<div id="panels"></div></section>
<script type="application/json" id="airtrace-meta">{meta_json}</script>
<script type="application/octet-stream" id="airtrace-blob">{encoded}</script>
<script>{js}</script>
</body></html>
"""


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def report(
    source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Run,
    out: str | os.PathLike[str],
    *,
    findings: Sequence[Finding] | None = None,
    findings_capture: str | os.PathLike[str] | None = None,
    max_connections: int = MAX_CONNECTIONS,
    progress: TextIO | None = None,
) -> str:
    """Write the HTML report of a bundle or captures to `out`; returns its path (see `build`)."""
    run = source if isinstance(source, Run) else views.load(source)
    text = build(run, findings=findings, findings_capture=findings_capture, max_connections=max_connections,
                 progress=progress)
    out = os.fspath(out)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    write_bytes_atomically(Path(out), text.encode("utf-8"))
    return out
