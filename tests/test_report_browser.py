"""The HTML report in a real browser: Playwright drives Debian's chromium, headless.

Opens the report of a simulated bursty-link run and checks what a person would: no
console errors, every plot drew something, zooming into a time range changes what is
shown, findings link to their time span. On the report of the bundled sample capture
(seven connections) it clicks as a user would (issue 17 item 2): a finding zooms to its
span and plots its connection, a connection row plots that connection on its own span
and the heading says which, an evidence frame highlights that packet. Screenshots are
kept in tests/artifacts/.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Iterator

import pytest

import airtrace
from airtrace.finding import Finding
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


def finding(conn: int, start_s: float, end_s: float, evidence: list[int], cost_s: float) -> Finding:
    """A finding of connection `conn` over a span, with its evidence frames."""
    return Finding("timeout_backoff", conn, "a_to_b", start_s, end_s, cost_s, 0.1, tuple(evidence), "test finding", "none")


@pytest.fixture(scope="module")
def bursty_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    text = (ROOT / "scenarios" / "rais_burst_fixed.toml").read_text()
    text = text.replace('captures = ["sender", "receiver"]', 'captures = ["sender", "receiver", "link_in", "link_out"]')
    scenario = tmp_path_factory.mktemp("sc") / "rais_burst_fixed.toml"
    scenario.write_text(text)
    bundle = tmp_path_factory.mktemp("bundle") / "rais"
    airtrace.simulate(scenario, out=bundle)
    findings = [finding(0, 20.0, 23.0, [1, 2, 3], cost_s=3.0)]
    return Path(report(bundle, tmp_path_factory.mktemp("html") / "report.html", findings=findings))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless chromium for the module's pages."""
    _need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield browser
        browser.close()


@contextmanager
def opened(browser: Any, path: Path) -> Iterator[Any]:
    """The report at `path` in a new page, loaded; `.errors` collects console errors."""
    pg = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file:") else route.continue_())
    pg.goto(path.as_uri())
    pg.wait_for_function("window.airtrace && (window.airtrace.ready || window.airtrace.error)", timeout=30_000)
    pg.errors = errors  # type: ignore[attr-defined]
    yield pg
    pg.close()


@pytest.fixture(scope="module")
def page(browser: Any, bursty_report: Path) -> Iterator[Any]:
    with opened(browser, bursty_report) as pg:
        yield pg


#: Findings on the sample capture: one on connection 3 (a short HTTP exchange), its
#: evidence that connection's frames.
SAMPLE = ROOT / "testdata" / "pcaps" / "sample-sender.pcapng"


@pytest.fixture(scope="module")
def sample_page(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    run = airtrace.read(SAMPLE)
    packets = run.packets()
    conn3 = packets[packets["conn"] == 3]
    frames = [int(f) for f in conn3["frame"].iloc[3:6]]
    t_rel = conn3["time_rel"].astype("float64")
    start, end = float(t_rel.iloc[2]), float(t_rel.iloc[-1])
    findings = [
        finding(1, 0.5, 0.6, [], cost_s=0.1),
        finding(3, start, end, frames, cost_s=end - start),
    ]
    out = report(SAMPLE, tmp_path_factory.mktemp("html") / "sample.html", findings=findings, findings_capture=SAMPLE)
    with opened(browser, Path(out)) as pg:
        pg.finding = (start, end, frames)  # type: ignore[attr-defined]
        yield pg


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
    assert page.locator("#conns tbody").count() == 1
    assert page.locator("#conns tbody tr").count() == 2, "a row per direction"
    assert page.locator("#findings .finding").count() == 1


def test_it_opens_on_the_span_where_the_data_flowed(page: Any) -> None:
    a, b = page.evaluate("window.airtrace.range()")
    focus = page.evaluate("JSON.parse(document.getElementById('airtrace-meta').textContent).connections_views[0].focus")
    assert a <= focus[0] < focus[1] <= b
    assert (b - a) < 1.1 * (focus[1] - focus[0]) + 0.1
    assert page.evaluate("window.airtrace.showing()").startswith("connection 0 (")
    page.click("#whole")
    whole = page.evaluate("window.airtrace.range()")
    assert whole[0] <= a + 1e-9 and whole[1] >= b - 1e-9
    page.evaluate("window.airtrace.reset()")
    assert page.evaluate("window.airtrace.range()") == pytest.approx([a, b])


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
    page.click("#findings a[data-finding]:not([data-frame])")
    page.wait_for_timeout(100)
    a, b = page.evaluate("window.airtrace.range()")
    assert 19.0 < a < 20.0 and 23.0 < b < 24.0
    assert page.errors == []


def test_the_multilayer_panel_draws_the_timeouts_and_idle_spans(page: Any) -> None:
    page.evaluate("window.airtrace.reset()")
    drawn = page.evaluate("""window.airtrace.panels.find(p => p.spec.id === 'multilayer').series
        .filter(s => s.label === 'RTO expiry' || s.style === 'spans').map(s => [s.label, s.n, s.drawn])""")
    assert len(drawn) == 2 and all(n > 0 for _, n, _ in drawn), drawn


def test_clicking_a_finding_plots_its_connection_on_its_span(sample_page: Any) -> None:
    start, end, _ = sample_page.finding
    assert sample_page.evaluate("window.airtrace.current()") == 1, "opens on the busiest connection"
    sample_page.click('#findings a[data-finding="1"]:not([data-frame])')
    sample_page.wait_for_timeout(100)
    assert sample_page.evaluate("window.airtrace.current()") == 3
    assert sample_page.locator("#conns tbody.current").get_attribute("data-conn") == "3"
    assert sample_page.evaluate("window.airtrace.showing()").startswith("connection 3 (")
    a, b = sample_page.evaluate("window.airtrace.range()")
    assert a < start < end < b and (b - a) < (end - start) + 0.2, (a, b, start, end)
    assert sample_page.errors == []


def test_clicking_a_connection_row_plots_it_and_says_which(sample_page: Any) -> None:
    sample_page.click('#conns tbody[data-conn="5"] td >> nth=0')
    sample_page.wait_for_timeout(100)
    assert sample_page.evaluate("window.airtrace.current()") == 5
    view = sample_page.evaluate(
        "JSON.parse(document.getElementById('airtrace-meta').textContent).connections_views.find(v => v.conn === 5)"
    )
    heading = sample_page.inner_text("#plots h2")
    assert view["label"] in heading and view["label"].startswith("connection 5 (")
    a, b = sample_page.evaluate("window.airtrace.range()")
    assert a <= view["focus"][0] < view["focus"][1] <= b
    assert f"{a:.3f} s – {b:.3f} s" in heading
    ARTIFACTS.mkdir(exist_ok=True)
    sample_page.screenshot(path=str(ARTIFACTS / "report-sample-conn5.png"), full_page=True)


def test_an_evidence_link_highlights_its_packet(sample_page: Any) -> None:
    _, _, frames = sample_page.finding
    sample_page.click("#conns tbody[data-conn=\"1\"] td >> nth=0")
    sample_page.click(f'#findings a[data-frame="{frames[1]}"]')
    sample_page.wait_for_timeout(100)
    assert sample_page.evaluate("window.airtrace.current()") == 3
    lit = sample_page.evaluate("window.airtrace.highlighted")
    assert [f["frame"] for f in lit] == [frames[1]]
    a, b = sample_page.evaluate("window.airtrace.range()")
    assert a <= lit[0]["t"] <= b
    # The ring is drawn on the time/sequence plot, where the packet is.
    ring = sample_page.evaluate("""(() => {
        const p = window.airtrace.panels.find(p => p.spec.id === 'tsg'), c = p.canvas;
        const ctx = c.getContext('2d'), dpr = c.width / c.getBoundingClientRect().width;
        const img = ctx.getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 0; i < img.length; i += 4) if (img[i] > 200 && img[i+1] < 60 && img[i+2] > 90) n++;
        return n; })()""")
    assert ring > 20, "highlight pixels (#e6007e) on the plot"
    ARTIFACTS.mkdir(exist_ok=True)
    sample_page.screenshot(path=str(ARTIFACTS / "report-sample-evidence.png"), full_page=True)
    assert sample_page.errors == []


@pytest.mark.parametrize("step", [2.5, 0.25, 0.025, 2500.0, 250.0, 2.5e6, 0.5, 1e-4])
def test_tick_labels_are_the_values_at_the_ticks(page: Any, step: float) -> None:
    """With ticks 2.5 apart the labels read 0, 3, 5, 8 before (one decimal short)."""
    unit = {"k": 1e3, "M": 1e6, "G": 1e9}
    for k in range(-3, 8):
        label = page.evaluate(f"window.airtrace.fmt({k} * {step}, {step})")
        value = float(label[:-1]) * unit[label[-1]] if label[-1] in unit else float(label)
        assert value == pytest.approx(k * step, abs=1e-12), (step, k, label)
