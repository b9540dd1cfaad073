"""Progress on long steps (issue 17 item 7): `airtrace analyze --parquet` draws one bar
over the whole job that never restarts nor goes back, with a label for each phase; it
draws nothing when stderr is no terminal."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from airtrace import _core, export, progress
from conftest import ROOT

SENDER = ROOT / "testdata" / "pcaps" / "sample-sender.pcapng"
RECEIVER = ROOT / "testdata" / "pcaps" / "sample-receiver.pcapng"


@pytest.fixture
def at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bars drawn from the start and at every change, on a terminal wide enough for the labels."""
    monkeypatch.setenv("COLUMNS", "160")
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "EVERY", 0.0)


def frames(drawn: str) -> list[tuple[str, int]]:
    """(label, percentage) of each state of the bar drawn on a stream."""
    found = []
    for frame in drawn.split("\r"):
        m = re.match(r"(.*?) \[[#.]+\]\s+(\d+)% ", frame)
        if m:
            found.append((m.group(1).rstrip(), int(m.group(2))))
    return found


def test_the_bar_never_goes_back_and_says_its_phase(at_once: None) -> None:
    out = io.StringIO()
    bar = progress.Bar(1000, out)
    bar.phase("analysing a.pcap (1/2)")
    bar.to(600)
    bar.to(300)  # a second pass starting over does not move it back
    bar.phase("writing the packets of a.pcap (1/2)")
    bar.to(5000)  # nor past the end
    drawn = frames(out.getvalue())
    assert drawn == [
        ("analysing a.pcap (1/2)", 0),
        ("analysing a.pcap (1/2)", 60),
        ("analysing a.pcap (1/2)", 60),
        ("writing the packets of a.pcap (1/2)", 60),
        ("writing the packets of a.pcap (1/2)", 100),
    ]
    assert len(bar.line(60)) == 60 and bar.line(60).startswith("writing the packets of a.… ["), "cut to fit"
    bar.close()
    assert out.getvalue().endswith("\r")
    last_line = out.getvalue().rsplit("\r", 2)[-2]
    assert last_line.strip() == "", "close clears the line"
    bar.to(10)
    assert out.getvalue().endswith("\r"), "nothing is drawn after close"


def test_no_stream_or_a_quick_job_draws_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    progress.Bar(10, None).to(5)  # no stream: nothing to draw on, nothing raised
    out = io.StringIO()
    monkeypatch.setattr(progress, "DELAY", 60.0)
    bar = progress.Bar(10, out)
    bar.phase("analysing")
    bar.to(10)
    bar.close()
    assert out.getvalue() == ""


def test_the_analysis_reports_the_bytes_it_has_read() -> None:
    seen: list[tuple[int, int | None]] = []
    _core.analyze(str(SENDER), packets=True, on_progress=lambda pos, size: seen.append((pos, size)))
    size = SENDER.stat().st_size
    assert seen and seen[-1] == (size, size)
    assert [pos for pos, _ in seen] == sorted(pos for pos, _ in seen)


def test_an_exception_in_the_progress_callback_is_raised() -> None:
    class Stop(Exception):
        pass

    calls = []

    def stop(pos: int, size: int | None) -> None:
        calls.append(pos)
        raise Stop

    with pytest.raises(Stop):
        _core.analyze(str(SENDER), on_progress=stop)
    assert len(calls) == 1, "no call after the one that raised"


def test_analyze_parquet_draws_one_bar_through_every_phase(at_once: None, tmp_path: Path) -> None:
    out = io.StringIO()
    printed = []
    export.write_parquet(
        [str(SENDER), str(RECEIVER)], str(tmp_path / "pq"), as_json=True, jobs=1, progress=out,
        on_file=lambda one: printed.append(one.path),
    )
    drawn = frames(out.getvalue())
    shares = [p for _, p in drawn]
    assert shares == sorted(shares) and shares[-1] == 100, "one bar, never restarting"
    labels = list(dict.fromkeys(label for label, _ in drawn))
    assert labels == [
        "analysing sample-sender.pcapng (1/2)",
        "diagnosing sample-sender.pcapng (1/2)",
        "building the tables of sample-sender.pcapng (1/2)",
        "writing the packets of sample-sender.pcapng (1/2)",
        "analysing sample-receiver.pcapng (2/2)",
        "diagnosing sample-receiver.pcapng (2/2)",
        "building the tables of sample-receiver.pcapng (2/2)",
        "writing the packets of sample-receiver.pcapng (2/2)",
        "writing the connections table",
    ]
    # The analysis moves the bar byte by byte: more states than phases.
    assert len(set(shares)) > 4
    assert printed == [str(SENDER), str(RECEIVER)]


def test_with_workers_the_bar_moves_a_capture_at_a_time(at_once: None, tmp_path: Path) -> None:
    out = io.StringIO()
    export.write_parquet([str(SENDER), str(RECEIVER)], str(tmp_path / "pq"), jobs=2, progress=out)
    drawn = frames(out.getvalue())
    shares = [p for _, p in drawn]
    assert drawn[0] == ("analysing 2 captures", 0) and shares == sorted(shares) and shares[-1] == 100
    assert ("writing the packets of sample-receiver.pcapng (2/2)", 100) in drawn


def test_no_bar_when_stderr_is_no_terminal(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "airtrace.cli", "analyze", "--parquet", str(tmp_path / "pq"), str(SENDER)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0 and "\r" not in done.stderr and "%" not in done.stderr


def on_a_terminal(argv: list[str], cwd: Path) -> tuple[int, str]:
    """Runs `argv` with its stderr on a pseudo-terminal: its exit status and what it drew there."""
    import os
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # EIO: the program has ended and closed its side
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=120), b"".join(chunks).decode(errors="replace")


#: A run long enough (about a second) for the bar to show: the clean link, kept busy for 2000 s.
LONG_RUN = ["simulate", "clean", "--set", 'duration="2000 s"', "--set", 'flow[1].bytes="10 GB"']


@pytest.mark.parametrize("command", ["native", "python"])
def test_simulate_shows_simulated_time_against_the_scenarios_end_on_a_terminal(command: str, tmp_path: Path) -> None:
    from conftest import native_airtrace

    exe = native_airtrace() if command == "native" else None
    if command == "native" and exe is None:
        pytest.skip("no native airtrace next to the interpreter")
    prog = [str(exe)] if exe else [sys.executable, "-m", "airtrace.cli"]
    code, drawn = on_a_terminal([*prog, *LONG_RUN], tmp_path)
    assert code == 0 and re.search(r"simulated \d+\.\d s of 2000\.0 s", drawn), drawn[-500:]
    code, drawn = on_a_terminal([*prog, *LONG_RUN, "--no-progress"], tmp_path)
    assert code == 0 and "simulated" not in drawn and "no bundle written" in drawn
