"""Errors in the user's words (issue 17, item 5): every command-line error names the file,
the value and what would be accepted, and no Python warning leaks. Every command here
runs with `-W error`, so that a warning would be a traceback."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

import airtrace

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "error", "-m", "airtrace.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def error(done: subprocess.CompletedProcess[str]) -> str:
    """The one `airtrace: error: ...` line of a failed command (argparse's usage line left out)."""
    assert done.returncode != 0, done.stdout
    lines = [line for line in done.stderr.splitlines() if not line.startswith("usage: ")]
    assert len(lines) == 1 and lines[0].startswith("airtrace: error: "), done.stderr
    return lines[0]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small bundle of one connection."""
    out = tmp_path_factory.mktemp("bundles") / "clean"
    airtrace.simulate(ROOT / "scenarios" / "clean.toml", out, set={"flow[1].bytes": "200 kB"})
    return out


def test_an_unknown_connection_id_names_the_ids_there(bundle: Path, tmp_path: Path) -> None:
    line = error(cli("plot", bundle, "-o", tmp_path / "x.png", "--conn", "99"))
    assert line == f"airtrace: error: {bundle}: no connection 99; --conn takes 0"


@pytest.mark.parametrize("window", [("5", "1"), ("5", "5")])
def test_a_reversed_or_empty_time_range_is_refused_without_a_warning(
    bundle: Path, tmp_path: Path, window: tuple[str, str]
) -> None:
    # Before, matplotlib's warnings about the legend and the limits leaked (a traceback under -W error).
    done = cli("plot", bundle, "-o", tmp_path / "x.png", "--time", *window)
    assert error(done) == (
        f"airtrace: error: --time {' '.join(window)}: FROM must be before TO (seconds from the capture's start, "
        "e.g. --time 0 10)"
    )
    assert not (tmp_path / "x.png").exists()


def test_a_capture_without_tcp_is_named(tmp_path: Path) -> None:
    arp = b"\xff" * 6 + b"\x02" * 6 + b"\x08\x06" + bytes(28)  # one Ethernet frame, no TCP in it
    capture = tmp_path / "arp.pcap"
    capture.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1) + struct.pack("<IIII", 0, 0, 42, 42) + arp)
    line = error(cli("plot", capture, "-o", tmp_path / "x.png"))
    assert line == f"airtrace: error: {capture}: no TCP connection in the capture"


def test_a_directory_given_for_a_capture_says_what_is_expected(bundle: Path) -> None:
    for done in (cli("analyze", bundle), cli("analyze", bundle, "--json")):
        assert error(done) == (
            f"airtrace: error: {bundle}: a directory, not a capture file (pcap or pcapng, gzipped or not; "
            "a simulation bundle's captures are its .pcap files)"
        )


def test_a_directory_given_for_a_scenario_or_findings_says_what_is_expected(bundle: Path, tmp_path: Path) -> None:
    assert error(cli("simulate", bundle)) == f"airtrace: error: {bundle}: cannot read the scenario: a directory, not a file"
    line = error(cli("report", bundle, "--findings", bundle, "-o", tmp_path / "r.html"))
    assert line == (
        f"airtrace: error: --findings {bundle}: a directory; it takes a JSON file with a list of findings, as "
        "`airtrace diagnose --json` writes"
    )


@pytest.mark.parametrize(
    ("length", "message"),
    [
        ('"100 mss"', 'unknown duration unit "mss" in "100 mss" (use ns, us, ms, s or min)'),
        ("100", '100 needs a unit: write a duration such as "20 ms"'),
        ('{ min = "50 ms" }', "missing field `max`"),
        ('{ min = "50 ms", max = "1 s", mean = "1 s" }', "unknown field `mean`"),
    ],
)
def test_a_scenario_value_no_form_accepts_names_the_value_and_the_forms(tmp_path: Path, length: str, message: str) -> None:
    text = (ROOT / "scenarios" / "rais_burst_uniform.toml").read_text()
    scenario = tmp_path / "bad.toml"
    scenario.write_text(text.replace('length = { min = "50 ms", max = "150 ms" }', f"length = {length}"))
    line = error(cli("simulate", scenario))
    assert line.startswith(f"airtrace: error: {scenario}:16:"), line
    assert message in line and "untagged" not in line
    if not length.startswith("{"):
        assert line.endswith('; or a uniform range { min = "50 ms", max = "150 ms" }')


def test_a_sweep_plan_value_no_form_accepts_lists_the_forms(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(f'scenario = "{ROOT / "scenarios" / "clean.toml"}"\nseeds = "three"\n')
    line = error(cli("sweep", plan, "--check"))
    assert "seeds are a list of integers such as [1, 2, 3] or a range { from = 1, to = 20 }" in line, line


@pytest.mark.parametrize(("typed", "meant"), [("analyse", "analyze"), ("simulat", "simulate"), ("reprodcue", "reproduce")])
def test_a_misspelt_command_suggests_the_nearest(typed: str, meant: str) -> None:
    done = cli(typed, "x")
    assert done.returncode == 2
    assert f"invalid choice: {typed!r}, did you mean {meant!r}? (choose from " in error(done)


def test_a_misspelt_study_suggests_the_nearest() -> None:
    assert "unknown study 'ludwik', did you mean 'ludwig'?" in error(cli("reproduce", "ludwik"))


def test_read_of_a_bundle_reads_the_capture_the_cli_diagnoses(bundle: Path) -> None:
    trace = airtrace.read(bundle)
    assert trace.capture == str(bundle / "sender.pcap")
    assert trace.connections.equals(airtrace.read(bundle / "sender.pcap").connections)
    assert len(trace.packets()) == trace.frames
    with pytest.raises(airtrace.AnalysisError, match="a directory, but not a bundle"):
        airtrace.read(bundle.parent)

