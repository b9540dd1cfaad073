"""Acceptance: airtrace's retransmission, fast_retransmission, duplicate_ack and
zero_window flags agree with tshark's on at least 99% of the packets either flags,
for every capture of the real corpus and for our own sample captures (explained
classes count as agreement)."""

from __future__ import annotations

import pytest

from conftest import ROOT, corpus_files
from tshark_compare import capture_paths, compare, compare_all

# Our own captures of a real transfer (testdata/pcaps/README.md): sender and receiver side.
SAMPLES = sorted((ROOT / "testdata" / "pcaps").glob("*.pcapng"))


@pytest.mark.parametrize("path", corpus_files() + SAMPLES, ids=lambda p: p.name)
def test_flags_agree_with_tshark(tshark: str, path) -> None:
    r = compare(tshark, path)
    shown = "; ".join(f"frame {f}: airtrace {sorted(a)} tshark {sorted(t)}" for f, a, t in r.disagreements[:8])
    assert r.ratio >= 0.99, f"{path.name}: {r.agree}/{r.union} agree ({r.ratio:.1%}); {shown}"


def test_flags_agree_with_tshark_over_the_second_corpus(tshark: str) -> None:
    """Issue 18's acceptance: over the 96 captures of testdata/corpus, kept apart from
    the fitting, at least 99 % of the frames either tool flags agree (tshark's proven
    errors excused, as above). Per file it is not required: a file of 8 flagged frames
    with two doubtful SYN/ACKs reads 75 % (docs/tshark-agreement.md lists each class)."""
    results = compare_all(tshark, capture_paths([str(ROOT / "testdata" / "corpus")]))
    agree, union = sum(r.agree for r in results), sum(r.union for r in results)
    assert union > 2000, "the corpus is there and flagged"
    worst = sorted(results, key=lambda r: r.ratio)[:3]
    assert agree / union >= 0.99, f"{agree}/{union}; worst: " + ", ".join(f"{r.path.name} {r.ratio:.1%}" for r in worst)
