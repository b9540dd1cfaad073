"""The second corpus of public real captures (testdata/corpus, issue 18): every capture
is analysed without error, and the airtrace numbers its MANIFEST.md prints are what the
analyzer says today, so the manifest cannot go stale. Marked `corpus`; a few seconds.

When the analyzer changes what it counts, regenerate the manifest's measured part:
    .venv/bin/python scripts/corpus_manifest.py
and say in the commit why the numbers moved."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import airtrace
from conftest import ROOT
from tshark_compare import Agreement, capture_paths, disagreement_classes

sys.path.insert(0, str(ROOT / "scripts"))
from corpus_manifest import (  # noqa: E402
    AIRTRACE_COLUMNS,
    airtrace_numbers,
    capture_files,
    manifest_airtrace_rows,
    provenance_files,
)

CORPUS2 = ROOT / "testdata" / "corpus"
MANIFEST = (CORPUS2 / "MANIFEST.md").read_text()
FILES = capture_files(CORPUS2)

pytestmark = pytest.mark.corpus


def test_the_corpus_is_there_with_a_provenance_row_per_file() -> None:
    assert len(FILES) >= 60
    assert sorted(provenance_files(MANIFEST)) == [p.name for p in FILES]
    assert set(manifest_airtrace_rows(MANIFEST)) == {p.name for p in FILES}
    assert max(p.stat().st_size for p in FILES) <= 2 * 2**20
    assert sum(p.stat().st_size for p in FILES) <= 40 * 2**20


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_each_capture_is_analysed_and_the_manifest_says_what_airtrace_says(path: Path) -> None:
    report = airtrace.read(path).report
    assert report["error"] is None, report["error"]
    assert report["frames"] > 0
    ours = airtrace_numbers(path)
    printed = manifest_airtrace_rows(MANIFEST)[path.name]
    stale = {c: (printed[c], ours[c]) for c in AIRTRACE_COLUMNS if printed[c] != ours[c]}
    assert not stale, f"{path.name}: manifest vs analyzer {stale}; run scripts/corpus_manifest.py"


def test_a_directory_on_the_compare_command_line_stands_for_its_captures(tmp_path: Path) -> None:
    (tmp_path / "b.pcap").write_bytes(b"")
    (tmp_path / "a.pcapng").write_bytes(b"")
    (tmp_path / "MANIFEST.md").write_text("")
    single = tmp_path / "c.pcap"
    assert capture_paths([str(tmp_path), str(single)]) == [tmp_path / "a.pcapng", tmp_path / "b.pcap", single]


def test_disagreements_are_grouped_by_which_flags_each_tool_set() -> None:
    one, two = Agreement(Path("one.pcap")), Agreement(Path("two.pcap"))
    one.disagreements = [(7, {"retransmission"}, set()), (9, set(), {"duplicate_ack"})]
    two.disagreements = [(3, {"retransmission"}, set())]
    assert disagreement_classes([one, two]) == {
        ("retransmission", "none"): ["one.pcap:7", "two.pcap:3"],
        ("none", "duplicate_ack"): ["one.pcap:9"],
    }
