"""A sweep's reports: each `[[report]]` of the plan as a table (the mean, least and
greatest `y` over the runs of each `x`, and `group_by` value, failed runs left out),
a PNG plot (RESULTS/report-N.png) and a section of RESULTS/report.html, a page that
needs nothing but itself to open."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airtrace.atomic import write_bytes_atomically

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure


def tables(frame: pd.DataFrame, meta: dict[str, Any]) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """Each report of the plan `meta` with its table over the rows `frame`."""
    import pandas as pd

    out = []
    ok = frame[frame["error"].isna()] if "error" in frame else frame
    for report in meta["reports"]:
        keys = [k for k in (report["group_by"], report["x"]) if k is not None]
        if ok.empty:
            table = pd.DataFrame(columns=[*keys, "mean", "min", "max", "runs"])
        else:
            grouped = ok.groupby(keys, sort=False, dropna=False)[report["y"]]
            table = grouped.agg(["mean", "min", "max", "count"]).rename(columns={"count": "runs"}).reset_index()
        out.append((report, table))
    return out


def number(v: float) -> str:
    """How a report's tables write a number."""
    return f"{v:.6g}"


def _figure(report: dict[str, Any], table: pd.DataFrame, log_x: bool) -> Figure:
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    from airtrace.plot import _figure as figure

    fig, (ax,) = figure(height=4.5)
    x, group = report["x"], report["group_by"]
    parts = list(table.groupby(group, sort=False)) if group is not None else [(None, table)]
    numeric = is_numeric_dtype(table[x]) and not is_bool_dtype(table[x])
    categories = list(dict.fromkeys(table[x]))
    for i, (value, part) in enumerate(parts):
        label = None if group is None else f"{group} = {value}"
        if numeric:
            part = part.sort_values(x)
            (line,) = ax.plot(part[x], part["mean"], marker="o", label=label)
            ax.fill_between(part[x], part["min"], part["max"], color=line.get_color(), alpha=0.15)
        else:
            at = [categories.index(v) + 0.1 * (i - (len(parts) - 1) / 2) for v in part[x]]
            below, above = (part["mean"] - part["min"]).clip(lower=0), (part["max"] - part["mean"]).clip(lower=0)
            ax.errorbar(at, part["mean"], yerr=[below, above], fmt="o", capsize=3, label=label)
    if not numeric:
        names = [str(c) for c in categories]
        ax.set_xticks(range(len(names)), names)
        if sum(map(len, names)) > 80:  # they would run into each other
            for tick in ax.get_xticklabels():
                tick.set_rotation(20)
                tick.set_horizontalalignment("right")
    if numeric and log_x:
        ax.set_xscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(f"{report['y']}: mean (range)")
    ax.set_title(report["title"])
    ax.grid(alpha=0.3)
    if group is not None:
        ax.legend()
    return fig


def draw(frame: pd.DataFrame, meta: dict[str, Any], out: Path) -> list[Path]:
    """Writes the plan's reports into `out` (nothing when it has none); returns the files."""
    if not meta["reports"]:
        return []
    scales = {p["name"]: p["scale"] for p in meta["parameters"]}
    failed = int(frame["error"].notna().sum()) if "error" in frame else 0
    sections, written = [], []
    for i, (report, table) in enumerate(tables(frame, meta), 1):
        png = io.BytesIO()
        if not table.empty:
            _figure(report, table, scales.get(report["x"]) == "log").savefig(png, format="png", dpi=110)
            path = out / f"report-{i}.png"
            write_bytes_atomically(path, png.getvalue())
            written.append(path)
        image = f'<img alt="" src="data:image/png;base64,{base64.b64encode(png.getvalue()).decode()}">' if png.tell() else ""
        sections.append(
            f"<section><h2>{html.escape(report['title'])}</h2>{image}"
            f"{table.to_html(index=False, float_format=number, border=0)}</section>"
        )
    title = html.escape(f"sweep {Path(meta['file']).name}")
    page = (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{title}</title><style>'
        "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}img{max-width:100%}"
        "table{border-collapse:collapse;margin:1em 0}td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #ddd}"
        f"</style></head><body><h1>{title}</h1><p>{html.escape(meta.get('description') or '')}</p>"
        f"<p>{len(frame)} runs ({failed} failed) of {html.escape(meta['scenario'])}; failed runs are left out "
        f"of the tables.</p>{''.join(sections)}</body></html>\n"
    )
    path = out / "report.html"
    write_bytes_atomically(path, page.encode())
    return [*written, path]


def tables_text(frame: pd.DataFrame, meta: dict[str, Any]) -> str:
    """The plan's report tables as `airtrace sweep` prints them: each titled, then a
    blank line."""
    return "".join(
        f"{report['title']}\n{table.to_string(index=False, float_format=number)}\n\n" for report, table in tables(frame, meta)
    )
