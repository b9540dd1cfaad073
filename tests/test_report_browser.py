"""The HTML report in a real browser: Playwright drives Debian's chromium, headless.

Opens the report of a simulated bursty-link run and checks what a person would: no
console errors, every plot drew something, zooming into a time range changes what is
shown, findings link to their time span. A screenshot is kept in tests/artifacts/.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

import airtrace
from airtrace.report import report

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = "/usr/bin/chromium"


def _need_browser() -> None:
    missing = []
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("playwright (pip install -e '.[dev]')")
    if not shutil.which(CHROMIUM):
        missing.append("chromium (scripts/apt-packages.txt; `make test` installs it)")
    if missing:
        if os.environ.get("CI") == "true":
            raise RuntimeError("missing: " + ", ".join(missing))
        pytest.skip("missing: " + ", ".join(missing))


@pytest.fixture(scope="module")
def bursty_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    text = (ROOT / "scenarios" / "rais_burst_fixed.toml").read_text()
    text = text.replace('captures = ["sender", "receiver"]', 'captures = ["sender", "receiver", "link_in", "link_out"]')
    scenario = tmp_path_factory.mktemp("sc") / "rais_burst_fixed.toml"
    scenario.write_text(text)
    bundle = tmp_path_factory.mktemp("bundle") / "rais"
    airtrace.simulate(scenario, out=bundle)
    findings = [{"title": "Timeouts after every burst", "severity": "problem", "conn": 0, "start_s": 20.0, "end_s": 23.0,
                 "detail": "test finding", "evidence_frames": [1, 2, 3]}]
    return Path(report(bundle, tmp_path_factory.mktemp("html") / "report.html", findings=findings))


@pytest.fixture(scope="module")
def page(bursty_report: Path) -> Iterator[Any]:
    _need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        pg = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file:") else route.continue_())
        pg.goto(bursty_report.as_uri())
        pg.wait_for_function("window.airtrace && (window.airtrace.ready || window.airtrace.error)", timeout=30_000)
        pg.errors = errors  # type: ignore[attr-defined]
        yield pg
        browser.close()


def panel_images(page: Any) -> dict[str, str]:
    return page.evaluate("Object.fromEntries(window.airtrace.panels.map(p => [p.spec.id, p.canvas.toDataURL()]))")  # type: ignore[no-any-return]


def test_opens_without_errors_and_every_plot_draws(page: Any) -> None:
    assert page.evaluate("window.airtrace.error") is None
    assert page.errors == []
    drawn = dict(page.evaluate("window.airtrace.panels.map(p => [p.spec.id, p.drawn])"))
    assert set(drawn) == {"multilayer", "tsg", "rtt", "cwnd", "queue", "throughput"}
    assert all(n > 0 for n in drawn.values()), drawn
    # Every retransmission, timeout and link loss is drawn one by one, even at full zoom-out.
    important = page.evaluate(
        "window.airtrace.panels.flatMap(p => p.series.filter(s => s.important).map(s => [s.label, s.n, s.drawn]))"
    )
    assert important and all(n == d for _, n, d in important), important
    assert page.locator("#conns tbody tr").count() == 1
    assert page.locator("#findings .finding").count() == 1


def test_zooming_changes_what_is_shown(page: Any) -> None:
    full = page.evaluate("window.airtrace.range()")
    before = panel_images(page)
    canvas = page.locator('canvas[data-panel="tsg"]')
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.40, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.45, y, steps=5)
    page.mouse.up()
    page.wait_for_timeout(100)
    zoomed = page.evaluate("window.airtrace.range()")
    assert full[0] < zoomed[0] < zoomed[1] < full[1]
    assert (zoomed[1] - zoomed[0]) < 0.1 * (full[1] - full[0])
    after = panel_images(page)
    assert all(before[k] != after[k] for k in before), "every plot redrew for the new time range"
    assert page.evaluate("window.airtrace.panels.every(p => p.drawn > 0)"), "something is visible in the zoomed range"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-bursty-zoomed.png"), full_page=True)
    page.dblclick('canvas[data-panel="tsg"]')
    page.wait_for_timeout(100)
    assert page.evaluate("window.airtrace.range()") == pytest.approx(full)
    page.screenshot(path=str(ARTIFACTS / "report-bursty.png"), full_page=True)
    assert (ARTIFACTS / "report-bursty.png").stat().st_size > 10_000


def test_thinned_drawing_keeps_gaps(page: Any) -> None:
    """At full zoom-out the segments are drawn per pixel column (more points than columns); the
    columns inside a timeout's idle span stay empty and the columns where data flowed do not."""
    page.evaluate("window.airtrace.reset()")
    columns = page.evaluate("""() => {
        const p = window.airtrace.panels.find(p => p.spec.id === 'tsg');
        const seg = p.series.find(s => s.label === 'data segments');
        for (const s of p.series) s.visible = s === seg;  // nothing drawn over the segments
        p.draw();
        const c = p.canvas, ctx = c.getContext('2d'), dpr = c.width / c.getBoundingClientRect().width;
        const [a, b] = window.airtrace.range(), pad = window.airtrace.PAD;
        const pw = c.getBoundingClientRect().width - pad.l - pad.r;
        const col = t => Math.floor(pad.l + (t - a) / (b - a) * pw);
        const black = x => {  // pure-black pixels (segments are #000) in one CSS-pixel column
            const img = ctx.getImageData(Math.round(x * dpr), 0, 1, c.height).data;
            let n = 0; for (let i = 0; i < img.length; i += 4) if (img[i] + img[i+1] + img[i+2] === 0 && img[i+3] > 200) n++;
            return n; };
        // the longest pause between consecutive segments
        let best = 0, at = 0;
        for (let i = 1; i < seg.n; i++) if (seg.X[i] - seg.X[i-1] > best) { best = seg.X[i] - seg.X[i-1]; at = i; }
        const x0 = col(seg.X[at-1]) + 2, x1 = col(seg.X[at]) - 2, mid = col(seg.X[at-1]) - 0;
        const inside = []; for (let x = x0; x <= x1; x++) inside.push(black(x));
        const before = black(mid) + black(mid - 1);
        for (const s of p.series) s.visible = true;
        p.draw();
        return {points: seg.n, pw, gapColumns: x1 - x0 + 1, insideBlack: inside.reduce((u, v) => u + v, 0),
                drawnColumns: seg.drawn, beforeBlack: before};
    }""")
    assert columns["points"] > 2 * columns["pw"], "the level-of-detail path is the one under test"
    assert columns["gapColumns"] >= 3, columns
    assert columns["insideBlack"] == 0, columns
    assert columns["beforeBlack"] > 0, columns


def test_a_finding_zooms_to_its_time_span(page: Any) -> None:
    page.click("#findings a[data-zoom]")
    page.wait_for_timeout(100)
    a, b = page.evaluate("window.airtrace.range()")
    assert 19.0 < a < 20.0 and 23.0 < b < 24.0
    assert page.errors == []
