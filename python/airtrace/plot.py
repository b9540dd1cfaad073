"""Static figures (matplotlib, Agg): PNG, SVG or PDF by the output's extension.

    airtrace plot BUNDLE -o multilayer.png                 # Ludwig et al.'s MultiTracer view
    airtrace plot sender.pcap --kind tsg -o tsg.svg        # tcptrace's time/sequence graph
    airtrace plot BUNDLE --kind all -o figs/run.png        # every figure, figs/run-<kind>.png

Kinds: multilayer, tsg, rtt, cwnd, throughput, utilization, all. Each figure names its
run and connection in the title and says where a series comes from in its legend
(sender state log, or inferred from the capture).

Figures that do not lie (issue 17 item 3): every tick label is the value at its tick
(no offset, decimals as many as the tick spacing needs, units with an SI prefix in the
axis label); throughput bins are a whole number of the data's packet spacing, and the
bin is said; legends and the facts box sit outside the plotting area, so they hide no
data; on a long run, the longest idle spans are marked with numbers and listed with
their times (`--time FROM TO` draws one of them).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from airtrace import views
from airtrace.atomic import write_atomically
from airtrace.views import Run, Series
from airtrace.wording import connection_name

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

KINDS = ("multilayer", "tsg", "rtt", "cwnd", "throughput", "utilization")
MAX_ANNOTATIONS = 6


def _figure(rows: int = 1, height: float = 5.0, ratios: Sequence[float] | None = None) -> tuple[Figure, list[Axes]]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, height), layout="constrained")
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False, gridspec_kw={"height_ratios": ratios} if ratios else None)
    return fig, [a for (a,) in axes]


def _draw(ax: Axes, s: Series, offset: float = 0.0, label: str | None = None, **kw: object) -> None:
    """Draw one series; points become short bars when they carry y2."""
    if len(s) == 0 and s.style != "vlines":
        return
    label = label or s.label
    y = s.y + offset
    if s.style == "step":
        ax.step(s.x, y, where="post", color=s.color, label=label, lw=1.2, **kw)
    elif s.style == "line":
        ax.plot(s.x, y, color=s.color, label=label, lw=1.2, **kw)
    elif s.style == "bars" and s.y2 is not None and len(s) <= 50_000:
        ax.vlines(s.x, y, s.y2 + offset, color=s.color, label=label, lw=1.0, **kw)
        ax.plot(s.x, s.y2 + offset, ls="none", marker="_", ms=3, color=s.color, rasterized=len(s) > 5000)
    elif s.style == "vlines":
        for i, x in enumerate(s.x):
            ax.axvline(x, color=s.color, ls=":", lw=1.0, label=label if i == 0 else None, **kw)
        if len(s.x) == 0:
            return
    else:
        big = len(s) > 5000
        ms = (2.5 if len(s) < 3000 else 1.5) if s.marker == "." else (4 if len(s) < 500 else 2.5)
        ax.plot(s.x, y, ls="none", marker=s.marker, ms=ms, color=s.color, label=label, rasterized=big,
                mfc="none" if s.marker == "o" else None, **kw)


def _window(s: Series, time: tuple[float, float] | None) -> Series:
    """The part of a series inside the time window (a step keeps the value it enters with)."""
    import numpy as np

    if time is None or len(s) == 0:
        return s
    lo = int(np.searchsorted(s.x, time[0], side="left"))
    hi = int(np.searchsorted(s.x, time[1], side="right"))
    if s.style == "step":
        lo = max(lo - 1, 0)
    if not np.all(np.diff(s.x) >= 0):
        keep = (s.x >= time[0]) & (s.x <= time[1])
        idx = np.flatnonzero(keep)
    else:
        idx = np.arange(lo, hi)
    return Series(s.label, s.x[idx], s.y[idx], s.style, s.color, None if s.y2 is None else s.y2[idx], s.marker, s.important, s.note)


def _title(ax: Axes, run: Run, what: str, conn: int | None) -> None:
    """The run and the connection, named as every text names it (`wording`), with the
    direction of its data (the one drawn); raised above the numbers that mark spans, if any."""
    where = f" — {connection_name(run.connections.loc[conn])}" if conn is not None else ""
    marked = any(t.get_text().isdigit() for t in ax.texts)
    ax.set_title(f"{what}: {run.title}{where}", fontsize=11, loc="left", pad=14 if marked else 6)


PREFIXES = ((1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def _decimals(step: float) -> int:
    """The decimals that write a tick spacing exactly (2.5 needs one, 0.25 two)."""
    for d in range(0, 10):
        if abs(round(step * 10**d) - step * 10**d) < 1e-6 * max(1.0, step * 10**d):
            return d
    return 10


def _values_at_ticks(axis: Any, scale: float = 1.0) -> None:
    """Tick labels that are the values at the ticks, divided by `scale`: no offset, no
    exponent, as many decimals as the spacing of the ticks needs."""
    from matplotlib.ticker import FuncFormatter

    def label(v: float, _pos: int | None) -> str:
        ticks = axis.get_majorticklocs()
        step = min((abs(b - a) for a, b in zip(ticks, ticks[1:]) if b != a), default=scale)
        text = f"{v / scale:,.{_decimals(step / scale)}f}"
        return "0" if text.lstrip("-").strip("0.,") == "" else text

    axis.set_major_formatter(FuncFormatter(label))


def _si(ax: Axes, what: str, unit: str, peak: float, axis: str = "y") -> None:
    """Label the axis "what (kunit)" with the SI prefix that suits `peak`, ticks in that unit."""
    scale, prefix = next(((f, p) for f, p in PREFIXES if abs(peak) >= f), (1.0, ""))
    target = ax.yaxis if axis == "y" else ax.xaxis
    _values_at_ticks(target, scale)
    (ax.set_ylabel if axis == "y" else ax.set_xlabel)(f"{what} ({prefix}{unit})")


def _time_axis(ax: Axes) -> None:
    """Seconds as plain numbers at the ticks (never "+1.2e3" beside them)."""
    _values_at_ticks(ax.xaxis)


def _legend(ax: Axes, handles: list[Any] | None = None, labels: list[str] | None = None) -> None:
    """The legend beside the plotting area, on the right: it hides no data."""
    args = (handles, labels) if handles is not None else ()
    ax.legend(*args, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8, framealpha=0.9)


def _legend_or_why_none(ax: Axes, cwnd: dict[str, Series]) -> None:
    """The cwnd axes' legend, or, when there is no cwnd to draw (a capture at the
    receiver), the reason in its place."""
    if cwnd:
        _legend(ax)
    else:
        ax.text(0.5, 0.5, f"no cwnd: {views.NOT_AT_SENDER}", transform=ax.transAxes, ha="center", va="center", fontsize=9)
        ax.set_yticks([])


def _sized(ax: Axes, what: str, unit: str) -> None:
    """`_si` with the prefix that suits the axis' current limits."""
    _si(ax, what, unit, max(abs(v) for v in ax.get_ylim()))


def _annotate_timeouts(ax: Axes, to: Series | None, offset: float = 0.0) -> None:
    """Mark each RTO expiry; label the ones with the largest backoff."""
    import numpy as np

    if to is None or len(to.x) == 0:
        return
    backoff = to.y2 if to.y2 is not None else np.ones(len(to))
    ax.plot(to.x, to.y + offset, ls="none", marker="v", ms=7 if len(to) < 40 else 4, color="C3",
            label=f"RTO expiry ({len(to)})", zorder=5)
    if len(to) > 3 * MAX_ANNOTATIONS:
        order = np.flatnonzero(backoff >= max(2, np.sort(backoff)[-MAX_ANNOTATIONS]))[:MAX_ANNOTATIONS]
    else:
        order = np.argsort(-backoff, kind="stable")[:MAX_ANNOTATIONS]
    for n, i in enumerate(sorted(order)):
        b = int(backoff[i])
        # The count, not 2^(b-1): the waits stop doubling at the stack's backoff cap.
        txt = "RTO" if b <= 1 else f"RTO, {b} in a row"
        ax.annotate(txt, (to.x[i], to.y[i] + offset), xytext=(-8, 22 + 16 * (n % 2)), textcoords="offset points", fontsize=8, ha="right",
                    color="C3", arrowprops={"arrowstyle": "-", "color": "C3", "lw": 0.6})


def _shade_idle(ax: Axes, run: Run, conn: int, time: tuple[float, float] | None) -> views.Utilization:
    """Shade the spans the link sat idle while the sender had data (Ludwig et al.'s waste)."""
    util = views.utilization(run, conn)
    spans = [(a, b) for a, b in util.idle_spans if time is None or (b > time[0] and a < time[1])]
    for i, (a, b) in enumerate(spans):
        ax.axvspan(a, b, color="C3", alpha=0.12, lw=0, label=f"link idle while the sender had data ({util.idle_source})" if i == 0 else None)
    return util


#: Width (inches) below which a span cannot be seen on a figure: then the run is long
#: for it, and the longest spans are marked and listed.
SEEN_INCHES = 0.05
#: The share of the time drawn the link must have sat idle for its idle spans to be pointed at.
IDLE_WORTH = 0.05


def _mark_long_run(fig: Figure, ax: Axes, spans: list[tuple[float, float]], time: tuple[float, float] | None) -> list[str]:
    """On a long run, the longest idle spans (at most MAX_ANNOTATIONS, one per place: none
    within three marks' width of a longer one) numbered above the plot, each drawn at
    least SEEN_INCHES wide; returns their list for the facts ("1: 20.10–23.40 s (3.30 s)").
    Nothing when the longest span can be seen at this scale, or when the spans add up to
    less than IDLE_WORTH of the time drawn."""
    shown = [(a, b) for a, b in spans if time is None or (b > time[0] and a < time[1])]
    if not shown:
        return []
    lo, hi = time if time is not None else (min(a for a, _ in shown), max(b for _, b in shown))
    if sum(min(b, hi) - max(a, lo) for a, b in shown) < IDLE_WORTH * (hi - lo):
        return []  # the link was hardly idle: nothing to point at
    # The plotting area is about half the figure's width: the legend and facts sit beside it.
    least = (hi - lo) / (0.5 * fig.get_figwidth()) * SEEN_INCHES
    chosen: list[tuple[float, float]] = []
    for a, b in sorted(shown, key=lambda ab: ab[0] - ab[1]):
        if len(chosen) < MAX_ANNOTATIONS and all(abs((a + b) - (c + d)) / 2 >= 3 * least for c, d in chosen):
            chosen.append((a, b))
    if chosen[0][1] - chosen[0][0] >= least:
        return []  # the longest can be seen: so can the place of every long one
    out = [f"the {len(chosen)} longest idle spans, one per place (--time FROM TO to draw one):"]
    for n, (a, b) in enumerate(sorted(chosen), start=1):
        mid, half = (a + b) / 2, max(b - a, least) / 2
        ax.axvspan(mid - half, mid + half, color="C3", alpha=0.35, lw=0, label="the longest idle spans (numbered)" if n == 1 else None)
        ax.annotate(str(n), (mid, 1.0), xycoords=("data", "axes fraction"), xytext=(0, 1), textcoords="offset points",
                    ha="center", va="bottom", fontsize=8, color="C3", fontweight="bold")
        out.append(f"{n}: {a:.2f}–{b:.2f} s ({b - a:.2f} s)")
    return out


def _facts_box(ax: Axes, lines: list[str]) -> None:
    """Text beside the plotting area, under its legend, at the bottom right: hides no data."""
    if lines:
        ax.text(1.01, 0.0, "\n".join(lines), transform=ax.transAxes, ha="left", va="bottom", fontsize=8,
                bbox={"boxstyle": "round", "fc": "white", "ec": "0.7", "alpha": 0.9})


def multilayer_figure(run: Run, conn: int | None = None, time: tuple[float, float] | None = None) -> Figure:
    """TCP sender, TCP receiver and link on one time axis, offset as MultiTracer offsets them;
    cwnd below, then the link queue; link idle while the sender had data shaded."""
    conn = run.main_connection() if conn is None else conn
    whole = views.multilayer(run, conn)
    layers = {k: _window(s, time) for k, s in whole.items()}
    gap = views.multilayer_offset(layers)
    queue = _window(views.link_queue(run), time) if run.link is not None else None
    has_queue = queue is not None and len(queue) > 0
    fig, axes = _figure(3 if has_queue else 2, 9.0 if has_queue else 7.5, ratios=[3, 1, 0.8] if has_queue else [3, 1])
    ax, axc = axes[0], axes[1]
    groups = [
        ("link_retx", +gap, "C3"), ("link_collision", +gap, "m"), ("link_data", +gap, "C2"),
        ("TcpSnd_data", 0.0, "C0"), ("TcpSnd_ack", 0.0, "C1"), ("no_route", 0.0, "C3"),
        ("TcpRcv_data", -gap, "C4"), ("TcpRcv_ack", -gap, "C5"),
    ]
    for key, off, color in groups:
        s = layers.get(key)
        if s is None:
            continue
        s.color = color
        shift = f" (+{gap / 1000:g} kB)" if off > 0 else f" (−{gap / 1000:g} kB)" if off < 0 else ""
        _draw(ax, s, off, label=f"{s.label}{shift} [{len(s)}]")
    resets = layers.get("link_reset")
    if resets is not None and len(resets):
        for i, x in enumerate(resets.x):
            ax.axvline(x, color="k", lw=1.2, ls="--", label=f"link reset ({len(resets)})" if i == 0 else None)
        ax.annotate("link reset", (resets.x[0], 1.0), xycoords=("data", "axes fraction"), xytext=(3, -12),
                    textcoords="offset points", fontsize=8)
    for key in ("route_error", "route_learned"):
        s = layers.get(key)
        if s is None or not len(s):
            continue
        if s.style == "vlines":
            _draw(ax, s, label=f"{s.label} ({len(s)})")
        else:
            ax.plot(s.x, s.x * 0, ls="none", marker=s.marker, ms=12, mew=1.5, color=s.color,
                    label=f"{s.label} [{len(s)}]", transform=ax.get_xaxis_transform())
    timeouts = views.tsg(run, conn).get("timeouts")
    _annotate_timeouts(ax, None if timeouts is None else _window(timeouts, time))
    util = _shade_idle(ax, run, conn, time)
    if time is not None:
        ax.set_xlim(*time)
        lows = [float((s.y + o).min()) for k, o, _ in groups if (s := layers.get(k)) is not None and len(s)]
        highs = [float((s.y + o).max()) for k, o, _ in groups if (s := layers.get(k)) is not None and len(s)]
        if lows:
            pad = (max(highs) - min(lows)) * 0.05 + 1
            ax.set_ylim(min(lows) - pad, max(highs) + pad * 4)
    marked = _mark_long_run(fig, ax, util.idle_spans, time)
    _sized(ax, "sequence number, relative", "B")
    _legend(ax)
    _facts_box(ax, _facts(run, conn, whole, util) + marked)
    ax.grid(alpha=0.3)
    _title(ax, run, "Multi-layer trace", conn)
    cw = views.cwnd(run, conn)
    for s in cw.values():
        _draw(axc, _window(s, time), label=s.label)
    _sized(axc, "bytes", "B")
    _legend_or_why_none(axc, cw)
    axc.grid(alpha=0.3)
    if queue is not None and has_queue:
        axq = axes[2]
        _draw(axq, queue)
        axq.set_ylabel("link queue (packets)")
        axq.set_ylim(bottom=0)
        _legend(axq)
        axq.grid(alpha=0.3)
    axes[-1].set_xlabel("time (s)")
    _time_axis(axes[-1])
    _arrow_longest_wait(ax, whole, time)
    return fig


def _arrow_longest_wait(ax: Axes, layers: dict[str, Series], time: tuple[float, float] | None) -> None:
    """A horizontal arrow from the segment that waited longest between sender and receiver (never
    retransmitted, so the wait is queueing and link-layer delay) to its arrival, when it is long
    enough to see."""
    import numpy as np

    snd, rcv = layers.get("TcpSnd_data"), layers.get("TcpRcv_data")
    if snd is None or rcv is None or not len(snd) or not len(rcv):
        return
    ys, counts = np.unique(snd.y, return_counts=True)
    once = set(ys[counts == 1].tolist())
    arrival = {}
    for x, y in zip(rcv.x, rcv.y):
        arrival.setdefault(float(y), float(x))
    best = (0.0, 0.0, 0.0)
    for x, y in zip(snd.x, snd.y):
        if y in once and y in arrival and (time is None or time[0] <= x and arrival[y] <= time[1]):
            if arrival[y] - x > best[0]:
                best = (arrival[y] - x, float(x), float(y))
    span = (time[1] - time[0]) if time else float(snd.x.max() - snd.x.min()) or 1.0
    wait, x, y = best
    if wait < 0.04 * span:
        return
    ax.annotate("", (x + wait, y), xytext=(x, y), arrowprops={"arrowstyle": "<->", "color": "k", "lw": 1.2})
    ax.annotate(f"this segment waited {wait:.1f} s\nbetween sender and receiver", (x, y),
                xytext=(-6, 6), textcoords="offset points", ha="right", va="bottom", fontsize=8.5)  # above-left: the curves rise to the right


def _facts(run: Run, conn: int, layers: dict[str, Series], util: views.Utilization) -> list[str]:
    """The numbers the eye should take from the multi-layer plot, in words."""
    import numpy as np

    out = ["whole run:"]
    snd, rcv = layers.get("TcpSnd_data"), layers.get("TcpRcv_data")
    if snd is not None and rcv is not None and len(snd) and len(rcv):
        # one-way delay of each sequence number's first arrival
        first_rcv: dict[float, float] = {}
        for x, y in zip(rcv.x, rcv.y):
            first_rcv.setdefault(y, x)
        delays = [first_rcv[y] - x for x, y in zip(snd.x, snd.y) if y in first_rcv and first_rcv[y] >= x]
        if delays:
            out.append(f"first sending → first arrival: median {np.median(delays):.2f} s, max {max(delays):.2f} s")
    link = run.link
    if link is not None:
        q = link.loc[link["dir"] == "down", "queue_packets"].dropna()
        if len(q):
            out.append(f"link queue: up to {int(q.max())} packets waiting")
        resets = int((link["kind"] == "link_reset").sum())
        if resets:
            out.append(f"{resets} link resets (buffers flushed)")
    to = views.tsg(run, conn).get("timeouts")
    if to is not None and len(to):
        most = int(np.nanmax(to.y2)) if to.y2 is not None else 1
        out.append(f"{len(to)} TCP timeout{'s' if len(to) > 1 else ''}" + (f", up to {most} in a row for the same data" if most > 1 else ""))
    out.append(f"utilization {util.utilization:.0%}: link idle {util.idle_s:.1f} s while data waited, "
               f"{util.resent_bytes / 1000:,.1f} kB sent twice")
    return out


def tsg_figure(run: Run, conn: int | None = None, capture: str | None = None, time: tuple[float, float] | None = None) -> Figure:
    """tcptrace-style time/sequence graph."""
    conn = run.main_connection() if conn is None else conn
    series = {k: _window(v, time) for k, v in views.tsg(run, conn, capture).items()}
    fig, (ax,) = _figure(1, 6)
    for key in ("window", "ack", "segments", "sack", "retx_timeout", "retx_fast_retransmit", "retx_sack", "retx_other"):
        s = series.get(key)
        if s is not None:
            _draw(ax, s, label=f"{s.label} [{len(s)}]")
    _annotate_timeouts(ax, series.get("timeouts"))
    util = _shade_idle(ax, run, conn, time)
    if time is not None:
        ax.set_xlim(*time)
        _autoscale_y(ax, time)
    ax.set_xlabel("time (s)")
    _time_axis(ax)
    _sized(ax, "sequence number, relative", "B")
    _legend(ax)
    _facts_box(ax, _mark_long_run(fig, ax, util.idle_spans, time))
    ax.grid(alpha=0.3)
    _title(ax, run, f"Time/sequence at {capture or run.sender_name}", conn)
    return fig


def rtt_figure(run: Run, conn: int | None = None, time: tuple[float, float] | None = None) -> Figure:
    conn = run.main_connection() if conn is None else conn
    fig, (ax,) = _figure(1, 4.5)
    series = {k: _window(v, time) for k, v in views.rtt(run, conn).items()}
    for s in series.values():
        _draw(ax, s, label=f"{s.label} [{len(s)}]" if s.style == "points" else s.label)
    to = views.tsg(run, conn).get("timeouts")
    _annotate_timeouts(ax, _at_top(None if to is None else _window(to, time), series))
    ax.set_xlabel("time (s)")
    _time_axis(ax)
    ax.set_ylabel("seconds")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.15)
    _values_at_ticks(ax.yaxis)
    _legend(ax)
    ax.grid(alpha=0.3)
    _title(ax, run, views.rtt_title(run, conn), conn)
    return fig


def _at_top(to: Series | None, series: dict[str, Series]) -> Series | None:
    """Timeout markers moved to the RTO curve's height (so they sit on the RTT axis)."""
    import numpy as np

    if to is None or len(to) == 0:
        return to
    rto = series.get("rto")
    if rto is None or len(rto) == 0:
        y = np.zeros(len(to))
    else:
        # the timer value that ran out: the last one set before the expiry
        idx = np.clip(np.searchsorted(rto.x, to.x, side="left") - 1, 0, len(rto) - 1)
        y = rto.y[idx]
    return Series(to.label, to.x, y, style=to.style, color=to.color, y2=to.y2)


def cwnd_figure(run: Run, conn: int | None = None, time: tuple[float, float] | None = None) -> Figure:
    conn = run.main_connection() if conn is None else conn
    fig, (ax,) = _figure(1, 4.5)
    series = {k: _window(v, time) for k, v in views.cwnd(run, conn).items()}
    for s in series.values():
        _draw(ax, s)
    ax.set_xlabel("time (s)")
    _time_axis(ax)
    _sized(ax, "bytes", "B")
    _legend_or_why_none(ax, series)
    ax.grid(alpha=0.3)
    inferred = any(s.note == "inferred" for s in series.values())
    _title(ax, run, "Congestion window (inferred)" if inferred else "Congestion window and ssthresh", conn)
    return fig


def throughput_figure(run: Run, conn: int | None = None, time: tuple[float, float] | None = None) -> Figure:
    conn = run.main_connection() if conn is None else conn
    fig, (ax,) = _figure(1, 4.5)
    series = views.throughput(run, conn, time=time)
    for s in series.values():
        _draw(ax, s, label=s.label.replace(" (", "\n(", 1))  # a narrow legend: the bin on its own line
    ax.set_xlabel("time (s)")
    _time_axis(ax)
    ax.set_ylim(bottom=0)
    width = float(series["sent"].note) if series else 0.0
    _sized(ax, f"throughput, mean over {width:.3g} s bins", "bit/s")
    _legend(ax)
    ax.grid(alpha=0.3)
    _title(ax, run, "Throughput", conn)
    return fig


def utilization_figure(run: Run) -> Figure:
    """Per connection: where the time went (idle while data waited) and bytes sent more than once."""
    conns = [int(c) for c in run.connections["id"]]
    utils = [views.utilization(run, c) for c in conns]
    utils = [u for u in utils if u.data_bytes > 0] or utils
    fig, (ax,) = _figure(1, 2.2 + 0.8 * len(utils))
    labels = [f"conn {u.conn}: {u.label}" for u in utils]
    ys = range(len(utils))
    busy = [100 * (1 - u.idle_fraction) * (1 - u.resent_fraction) for u in utils]
    resent = [100 * (1 - u.idle_fraction) * u.resent_fraction for u in utils]
    idle = [100 * u.idle_fraction for u in utils]
    ax.barh(ys, busy, height=0.45, color="C2", label="useful: new data on the link")
    ax.barh(ys, resent, height=0.45, left=busy, color="C1", label="bytes sent more than once")
    ax.barh(ys, idle, height=0.45, left=[a + b for a, b in zip(busy, resent)], color="C3", label="link idle while the sender had data")
    for y, u, b in zip(ys, utils, busy):
        ax.text(0.5, y - 0.26, f"utilization {u.utilization:.0%}: link idle {u.idle_s:.1f} s of {u.duration_s:.1f} s; "
                f"{u.resent_bytes / 1000:,.1f} kB of {u.data_bytes / 1000:,.1f} kB sent more than once", va="bottom", fontsize=8.5)
    ax.set_yticks(list(ys), labels, fontsize=8)
    ax.set_ylim(len(utils) - 0.5, -0.75)
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of the connection's time (%)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.35 if len(utils) < 3 else -0.12), ncols=3, fontsize=8, frameon=False)
    src = {u.idle_source for u in utils}
    ax.set_title(f"Utilization (Ludwig et al.): {run.title} — idle time {', '.join(sorted(src))}", fontsize=11, loc="left")
    return fig


def _autoscale_y(ax: Axes, time: tuple[float, float]) -> None:
    """Fit the y axis to what the x window shows."""
    import numpy as np

    lo, hi = np.inf, -np.inf
    for line in ax.get_lines():
        x, y = (np.asarray(v, dtype=float) for v in line.get_data())
        if x.size == 0 or x.size != y.size:
            continue
        sel = (x >= time[0]) & (x <= time[1]) & np.isfinite(y)
        if sel.any():
            lo, hi = min(lo, y[sel].min()), max(hi, y[sel].max())
    if np.isfinite(lo) and hi > lo:
        pad = (hi - lo) * 0.06
        ax.set_ylim(lo - pad, hi + pad)


def figure(run: Run, kind: str, conn: int | None = None, time: tuple[float, float] | None = None) -> Figure:
    """One figure of the given kind (zoomed to `time`, seconds, if given)."""
    if kind == "multilayer":
        return multilayer_figure(run, conn, time)
    if kind == "tsg":
        return tsg_figure(run, conn, time=time)
    if kind == "rtt":
        return rtt_figure(run, conn, time)
    if kind == "cwnd":
        return cwnd_figure(run, conn, time)
    if kind == "throughput":
        return throughput_figure(run, conn, time)
    if kind == "utilization":
        return utilization_figure(run)
    raise ValueError(f"unknown plot kind {kind!r}: choose one of {', '.join(KINDS)}, all")


def plot(
    source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    kind: str = "multilayer",
    conn: int | None = None,
    time: tuple[float, float] | None = None,
    dpi: int = 120,
) -> list[str]:
    """Draw `kind` (or every kind with "all") for a bundle or captures; returns the files written."""
    run = source if isinstance(source, Run) else views.load(source)
    out = os.fspath(out)
    kinds = KINDS if kind == "all" else (kind,)
    written = []
    for k in kinds:
        fig = figure(run, k, conn, time)
        if time is not None and k not in ("utilization", "multilayer"):
            for ax in fig.axes:
                ax.set_xlim(*time)
                _autoscale_y(ax, time)
        path = out
        if len(kinds) > 1:
            stem, ext = os.path.splitext(out)
            path = f"{stem}-{k}{ext}"
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        fmt = os.path.splitext(path)[1].lstrip(".").lower() or "png"
        write_atomically(Path(path), lambda f: fig.savefig(f, format=fmt, dpi=dpi))
        written.append(path)
    return written
