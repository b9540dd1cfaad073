"""One truth per number (issue 17 item 1): `analyze` (table and --json), `diagnose`
(text and --json) and `report` on one capture name a connection and its directions the
same way (`connection ID (A → B)`, `a_to_b` / `b_to_a`), and write rates and times in one
convention (bit/s and seconds, with SI prefixes)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from conftest import CORPUS

from airtrace.wording import si

#: Spellings no text may use: other arrows and direction names, other units of rate.
OTHER_SPELLINGS = re.compile(r"->|\ba>b\b|\bb>a\b|\bc2s\b|\bs2c\b|\b[kMG]?b/s\b|\b[kMG]?B/s\b|\b[kMG]?bps\b|\brtt ms\b")


def cli(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "airtrace.cli", *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def visible(page: str) -> str:
    """The report's text as shown: without its scripts, styles and comments."""
    return re.sub(r"<script.*?</script>|<style.*?</style>|<!--.*?-->", "", page, flags=re.S)


def test_analyze_diagnose_and_report_name_a_connection_and_its_directions_alike(tmp_path: Path) -> None:
    capture = str(CORPUS / "zeek_206_example_b.pcap")
    conn = json.loads(cli("analyze", "--json", capture))["files"][0]["connections"][0]
    name = f"{conn['a']} → {conn['b']}"
    assert name == "192.168.72.14:3254 → 65.54.95.206:80"
    goodput = si(conn["b_to_a"]["goodput_bps"], "bit/s")
    assert goodput == "87.4 kbit/s"

    table = cli("analyze", capture)
    rows = table.splitlines()
    first = next(i for i, line in enumerate(rows) if line.split()[:1] == ["0"])
    assert name in rows[first] and rows[first].split()[4] == "a_to_b"
    assert rows[first + 1].split()[0] == "b_to_a" and f" {goodput} " in rows[first + 1]

    text = cli("diagnose", capture)
    assert f"connection 0 ({name}), data b_to_a: " in text
    assert f", {goodput}, " in text
    assert "[timeout_backoff] connection 0 b_to_a, " in text
    found = json.loads(cli("diagnose", "--json", capture))
    assert {f["direction"] for f in found if f["connection"] == 0} == {"b_to_a"}

    out = tmp_path / "report.html"
    subprocess.run([sys.executable, "-m", "airtrace.cli", "report", capture, "-o", str(out), "--no-progress"], check=True,
                   capture_output=True)
    page = out.read_text()
    meta = json.loads(re.search(r'id="airtrace-meta">(.*?)</script>', page, re.S)[1])
    assert meta["connections_views"][0]["label"] == f"connection 0 ({name}), data b_to_a"
    shown = visible(page)
    assert "<b>timeout_backoff b_to_a — " in shown
    b_row = re.search(r'<tbody data-conn="0">.*?<tr data-dir="b_to_a">(.*?)</tr>', shown, re.S)[1]
    assert "<td>b_to_a</td>" in b_row and f"<td>{goodput}</td>" in b_row

    for what, words in (("analyze", table), ("diagnose", text), ("report", shown)):
        assert not OTHER_SPELLINGS.search(words), (what, OTHER_SPELLINGS.search(words))
