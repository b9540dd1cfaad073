"""One shape for a finding (issue 17 item 10): the typed `Finding` has the keys of the
Rust JSON, passes it through unchanged, and is what `airtrace.diagnose`,
`Trace.findings`, `airtrace diagnose --json` and the report all use."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

import airtrace
from airtrace import _core, report, views
from airtrace.finding import Finding, FindingError

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "testdata" / "pcaps" / "sample-sender.pcapng"
FIELDS = [f.name for f in dataclasses.fields(Finding)]


def rust_findings(path: Path) -> list[dict]:  # type: ignore[type-arg]
    """The findings of one capture as the Rust diagnosis writes them (its JSON, parsed)."""
    return json.loads(_core.diagnose(str(path)))["findings"]  # type: ignore[no-any-return]


def corpus_captures() -> list[Path]:
    """The real captures: the shared corpus and testdata/corpus."""
    from conftest import corpus_files

    second = ROOT / "testdata" / "corpus"
    return corpus_files() + sorted(p for p in second.iterdir() if p.is_file() and p.suffix != ".md")


def test_the_finding_type_has_exactly_the_keys_of_the_rust_json() -> None:
    """Fields and keys cannot drift apart: every finding the Rust diagnosis writes for a
    real capture has the keys of Finding, `file` aside (the command line's); `airtrace
    analyze --json` writes them in the order of the fields (the Rust struct's), the
    diagnosis' own JSON (and so `airtrace diagnose --json`) in the order of their names."""
    path = ROOT.parent / "shared" / "corpus" / "real" / "ppa1e_email-troubles.pcap"
    if not path.is_file():
        pytest.skip("no corpus beside the repository")
    analysed = json.loads(_core.analyze(str(path), findings=True).json)["findings"]
    assert analysed and all(list(f) + ["file"] == FIELDS for f in analysed)
    found = rust_findings(path)
    assert found and all(list(f) == sorted(FIELDS[:-1]) for f in found)


def test_the_typed_finding_passes_the_rust_json_through_unchanged() -> None:
    """On every real capture, each Rust finding read into a Finding and written back is
    the same JSON text, byte for byte (the key order, every float's digits)."""
    captures = corpus_captures()
    checked = 0
    for path in captures:
        for raw in rust_findings(path):
            assert json.dumps(Finding.from_dict(raw).to_dict()) == json.dumps(raw), path.name
            checked += 1
    assert checked > 100


def test_diagnose_json_prints_the_rust_findings_with_their_file() -> None:
    """`airtrace diagnose --json` prints what it printed before the typed findings: the
    Rust JSON of each finding with the input's `file` last, indented by two."""
    inputs = [SAMPLE, *corpus_captures()[:3]]
    done = subprocess.run(
        [sys.executable, "-m", "airtrace.cli", "diagnose", "--json", *map(str, inputs)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    expected = [dict(f, file=str(p)) for p in inputs for f in rust_findings(p)]
    assert done.stdout == json.dumps(expected, indent=2) + "\n"


def test_diagnose_returns_typed_findings_that_name_their_input() -> None:
    found = airtrace.diagnose(SAMPLE)
    assert airtrace.Finding is Finding and "Finding" in dir(airtrace)
    assert found and all(isinstance(f, Finding) and f.file == str(SAMPLE) for f in found)
    with pytest.raises(dataclasses.FrozenInstanceError):
        found[0].cost_s = 0.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        found[0].details["max_backoff"] = 0.0  # type: ignore[index]


def test_trace_findings_has_a_column_per_field() -> None:
    table = airtrace.read(SAMPLE).findings
    assert list(table.columns) == FIELDS
    assert table.to_dict("records") == [f.to_dict() for f in airtrace.diagnose(SAMPLE)]


def test_the_report_shows_each_typed_finding_as_it_is(tmp_path: Path) -> None:
    """The report takes the Findings themselves: each entry is the finding's title,
    severity, explanation and fix; the page's findings are theirs, in order."""
    run = views.load(SAMPLE)
    found = airtrace.diagnose(SAMPLE)
    page = report.build(run, findings=found, findings_capture=SAMPLE)
    meta = json.loads(page.split('id="airtrace-meta">', 1)[1].split("</script>", 1)[0])
    assert [m["conn"] for m in meta["findings"]] == [f.connection for f in found]
    for f in found:
        assert f'<span class="sev">{f.severity}</span> <b>{f.title}</b>' in page
    assert found[0].severity in ("problem", "warning", "info")


def test_report_findings_file_takes_what_diagnose_json_writes(tmp_path: Path) -> None:
    """`airtrace report --findings` reads `airtrace diagnose --json` into the same
    findings section as the report's own diagnosis; an object of another shape is
    refused with the key and what a finding has."""
    cli = [sys.executable, "-m", "airtrace.cli"]
    listed = tmp_path / "findings.json"
    listed.write_text(subprocess.run([*cli, "diagnose", "--json", str(SAMPLE)], capture_output=True, text=True).stdout)
    given, own = tmp_path / "given.html", tmp_path / "own.html"
    for out, extra in ((given, ["--findings", str(listed)]), (own, [])):
        done = subprocess.run([*cli, "report", str(SAMPLE), "-o", str(out), "--no-progress", *extra], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr

    def section(p: Path) -> str:
        return p.read_text().split('<section id="findings">', 1)[1].split("</section>", 1)[0]

    assert section(given) == section(own)
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"title": "x", "severity": "problem", "conn": 0}]))
    done = subprocess.run([*cli, "report", str(SAMPLE), "-o", str(tmp_path / "x.html"), "--findings", str(other)],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"--findings {other}: finding 1: unknown key 'title' (a finding has kind, connection" in done.stderr


@pytest.mark.parametrize(
    "bad, says",
    [
        ({"kind": 3}, "'kind' takes a string"),
        ({"connection": -1}, "'connection' takes a whole number from 0"),
        ({"start_s": "soon"}, "'start_s' takes a number"),
        ({"evidence": [1, "x"]}, "'evidence' takes a whole number from 0"),
        ({"details": {"timeouts": "3"}}, "'details.timeouts' takes a number"),
    ],
)
def test_a_finding_of_the_wrong_types_is_refused_by_name(bad: dict, says: str) -> None:  # type: ignore[type-arg]
    good = airtrace.diagnose(SAMPLE)[0].to_dict()
    with pytest.raises(FindingError, match=says):
        Finding.from_dict(good | bad)
    with pytest.raises(FindingError, match="no key 'fix'"):
        Finding.from_dict({k: v for k, v in good.items() if k != "fix"})
