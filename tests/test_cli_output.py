"""What the command line prints, byte for byte, against golden files (issue 17 item 10).

cli.py parses and dispatches; the text of the findings, the connections, the
simulation's and the query's tables, the plan check and the listings is written by the
modules that own those data. Moving it there must not change a byte: these commands'
standard output was recorded in tests/golden/cli/ before the move, on the bundled
sample, real captures of both corpora and a simulated bundle.

When an output is meant to change, rewrite the golden files and review their diff:
`AIRTRACE_REGOLD=1 .venv/bin/python -m pytest tests/test_cli_output.py`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "cli"
REAL = "../shared/corpus/real"

#: Golden file name: the command's arguments, run from the repository's root.
COMMANDS = {
    "diagnose-sample": ["diagnose", "testdata/pcaps/sample-sender.pcapng"],
    "diagnose-real": [
        "diagnose", f"{REAL}/ppa1e_email-troubles.pcap", f"{REAL}/ndpi_weibo.pcap", f"{REAL}/arkime_80211http.pcap",
    ],
    "diagnose-corpus2": ["diagnose", "testdata/corpus/ndpi_ocs.pcap", "testdata/corpus/ivre_telnet-raw.pcap"],
    "sweep-check": ["sweep", "plans/mathis.toml", "--check"],
    "reproduce-list": ["reproduce"],
    "example-list": ["example"],
}


def cli(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "airtrace.cli", *args], cwd=cwd, capture_output=True, text=True,
        env=os.environ | {"COLUMNS": "100"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def same_as_golden(name: str, out: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("AIRTRACE_REGOLD") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(out)
    assert out == path.read_text(), f"airtrace {name}: the output changed (see the module's doc to regold)"


@pytest.mark.parametrize("name", COMMANDS)
def test_the_command_prints_what_it_printed_before(name: str) -> None:
    if any(a.startswith(REAL) for a in COMMANDS[name]) and not (ROOT / REAL).is_dir():
        pytest.skip("no corpus beside the repository")
    same_as_golden(name, cli(*COMMANDS[name], cwd=ROOT))


def test_a_simulated_bundle_its_diagnosis_and_a_query_print_what_they_printed_before(tmp_path: Path) -> None:
    """A simulation's table, the diagnosis of its bundle (the 802.11 findings from its
    air capture, the connection lines) and a query's table over its analysis."""
    out = cli("simulate", str(ROOT / "scenarios" / "wlan_collisions.toml"), "--out", "run", "--set", "duration=5 s",
                   cwd=tmp_path)
    same_as_golden("simulate-wlan", out)
    same_as_golden("diagnose-bundle", cli("diagnose", "run", cwd=tmp_path))
    cli("analyze", "--no-progress", "--parquet", "tables", "run/sender.pcap", cwd=tmp_path)
    sql = "SELECT id, a_to_b__retransmitted_packets, duration_s, a FROM connections ORDER BY id"
    same_as_golden("query-connections", cli("query", "tables", sql, cwd=tmp_path))


def test_each_text_is_rendered_by_the_module_that_owns_its_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """cli.py parses and dispatches: what it prints is what the owning modules render,
    which scripts can call themselves (the findings' text in findings_text, the
    connection lines in trace, the simulation's table in simulation, the query's in
    dataset, the plan check in sweeps, the listings in reproduce and data)."""
    import airtrace
    from airtrace import data, dataset, reproduce, simulation, sweeps
    from airtrace.findings_text import findings_text
    from airtrace.trace import connection_lines

    sample = "testdata/pcaps/sample-sender.pcapng"
    found = airtrace.diagnose(ROOT / sample)
    text = findings_text(sample, found, connection_lines(ROOT / sample))
    assert text == cli("diagnose", sample, cwd=ROOT)
    summary = airtrace.simulate(ROOT / "scenarios" / "wlan_collisions.toml", tmp_path / "run", set={"duration": "2 s"})
    assert simulation.summary_table(summary) == cli(
        "simulate", str(ROOT / "scenarios" / "wlan_collisions.toml"), "--set", "duration=2 s", cwd=tmp_path
    )
    cli("analyze", "--no-progress", "--parquet", "tables", "run/sender.pcap", cwd=tmp_path)
    sql = "SELECT id, duration_s FROM connections"
    assert dataset.text_table(*dataset.rows(tmp_path / "tables", sql)) == cli("query", "tables", sql, cwd=tmp_path)
    monkeypatch.chdir(ROOT)  # the plan names its scenario relative to the path given
    plan = sweeps.load("plans/mathis.toml", tmp_path / "results")
    assert sweeps.plan_text(plan, "plans/mathis.toml") == cli("sweep", "plans/mathis.toml", "--check", cwd=ROOT)
    assert reproduce.listing() == cli("reproduce", cwd=ROOT)
    assert data.listing() == cli("example", cwd=ROOT)
