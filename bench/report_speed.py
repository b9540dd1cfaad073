#!/usr/bin/env python3
"""How fast the HTML report of a big capture opens and draws in headless chromium.

    python3 bench/report_speed.py CAPTURE.pcap [--runs 3] [--out bench/out/report.html] [--write-docs]

Builds the report (timed), checks its size, then opens it RUNS times in headless
chromium (Debian's, driven by Playwright) and measures, each time from navigation
start: the page is ready when the data are inflated and every plot has drawn. Then
zooms (10 %, 1 %, back to full) and switches to every connection, timing each redraw.
Fails (exit 1) unless the report opens and draws in under 5 s and is under 50 MB.
--write-docs replaces the "Report" section of docs/benchmarks.md (between its markers).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT_S, LIMIT_MB = 5.0, 50.0
START, END = "<!-- report-speed:start -->", "<!-- report-speed:end -->"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("capture")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "report-speed.html"))
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()

    import airtrace
    from airtrace.report import report

    trace = airtrace.read(args.capture)
    frames = trace.frames
    c = trace.connections
    busiest = int((c["a_to_b.packets"] + c["b_to_a.packets"]).max()) if len(c) else 0
    segments = int((c["a_to_b.data_packets"] + c["b_to_a.data_packets"]).sum()) if len(c) else 0
    t = time.perf_counter()
    report(args.capture, args.out)
    build_s = time.perf_counter() - t
    size_mb = os.path.getsize(args.out) / 1e6
    print(f"{args.capture}: {frames:,} frames; report built in {build_s:.1f} s, {size_mb:.1f} MB")

    from playwright.sync_api import sync_playwright

    opens, zooms, switches = [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, headless=True, args=["--no-sandbox"])
        for _ in range(args.runs):
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            t = time.perf_counter()
            page.goto(Path(args.out).resolve().as_uri(), timeout=120_000)
            page.wait_for_function("window.airtrace && (window.airtrace.ready || window.airtrace.error)", timeout=120_000)
            wall = time.perf_counter() - t
            ready_ms = page.evaluate("window.airtrace.readyAt")
            drawn = page.evaluate("window.airtrace.panels.map(p => p.drawn)")
            if errors or not drawn or min(drawn) == 0:
                print(f"error: {errors or 'a plot drew nothing'}", file=sys.stderr)
                return 1
            opens.append((ready_ms / 1000, wall))
            zooms.append(page.evaluate("""() => {
                const [a, b] = window.airtrace.range(), out = [];
                for (const f of [0.1, 0.01, 1]) {
                    const m = (a + b) / 2, h = (b - a) * f / 2, t = performance.now();
                    window.airtrace.setRange(m - h, m + h); out.push(performance.now() - t);
                }
                return out; }"""))
            switches.append(page.evaluate("""() => {
                const out = [];
                for (const v of JSON.parse(document.getElementById('airtrace-meta').textContent).connections_views) {
                    const t = performance.now(); window.airtrace.selectConnection(v.conn); out.push(performance.now() - t);
                }
                return out; }"""))
            page.close()
        browser.close()

    open_s = statistics.median(o[0] for o in opens)
    wall_s = statistics.median(o[1] for o in opens)
    zoom_ms = max(max(z) for z in zooms)
    switch_ms = max(max(s) for s in switches)
    ok = open_s < LIMIT_S and wall_s < LIMIT_S and size_mb < LIMIT_MB
    print(f"open and draw: median {open_s:.2f} s from navigation start ({wall_s:.2f} s wall, {args.runs} runs)")
    print(f"redraw after zoom: at most {zoom_ms:.0f} ms; switching connection: at most {switch_ms:.0f} ms")
    print(f"{'PASS' if ok else 'FAIL'}: under {LIMIT_S:g} s and {LIMIT_MB:g} MB")
    if args.write_docs:
        load = os.getloadavg()[0]
        section = f"""{START}
## Report: opening a one-million-packet capture

`python3 bench/report_speed.py {os.path.basename(args.capture)} --runs {args.runs} --write-docs`: the HTML report of
the first 1,000,000 packets of the bulk capture above ({frames:,} frames), opened {args.runs} times in headless
Debian chromium (Playwright), on the 2-CPU development VM (load average {load:.1f}).

| what | result | limit |
|---|---|---|
| build the report (`airtrace report`) | {build_s:.1f} s | |
| HTML size | {size_mb:.1f} MB | 50 MB |
| open and draw every plot (median, from navigation start) | {open_s:.2f} s | 5 s |
| same, wall time seen by the test driver | {wall_s:.2f} s | |
| redraw after a zoom (10 %, 1 %, full) | ≤ {zoom_ms:.0f} ms | |
| switch to another connection and draw it | ≤ {switch_ms:.0f} ms | |

At open the page draws the overview of every connection's data segments ({segments:,} points) and all the plots
of the busiest connection ({busiest:,} packets); the others are a click away (the switch time above). The page draws each series per pixel column (min and max of the points in it), so a redraw costs one pass over
the visible points; retransmissions, timeouts and resets are always drawn one by one.
{END}"""
        docs = ROOT / "docs" / "benchmarks.md"
        text = docs.read_text()
        if START in text and END in text:
            text = text[: text.index(START)] + section + text[text.index(END) + len(END) :]
        else:
            text = text.rstrip("\n") + "\n\n" + section + "\n"
        docs.write_text(text)
        print(f"wrote {docs}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
