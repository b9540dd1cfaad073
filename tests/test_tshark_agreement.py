"""Acceptance: airtrace's retransmission, fast_retransmission, duplicate_ack and
zero_window flags agree with tshark's on at least 99% of the packets either flags,
for every capture of the real corpus and for our own sample captures (explained
classes count as agreement)."""

from __future__ import annotations

import pytest

from conftest import ROOT, corpus_files
from tshark_compare import compare

# Our own captures of a real transfer (testdata/pcaps/README.md): sender and receiver side.
SAMPLES = sorted((ROOT / "testdata" / "pcaps").glob("*.pcapng"))


@pytest.mark.parametrize("path", corpus_files() + SAMPLES, ids=lambda p: p.name)
def test_flags_agree_with_tshark(tshark: str, path) -> None:
    r = compare(tshark, path)
    shown = "; ".join(f"frame {f}: airtrace {sorted(a)} tshark {sorted(t)}" for f, a, t in r.disagreements[:8])
    assert r.ratio >= 0.99, f"{path.name}: {r.agree}/{r.union} agree ({r.ratio:.1%}); {shown}"
