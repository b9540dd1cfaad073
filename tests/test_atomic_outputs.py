"""Issue 19 items 8 and 9: `analyze --parquet`, `plot` and `report` write whole
outputs or none, leave no temporary file behind, and name the path in their errors."""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

import pytest

import airtrace
from airtrace import atomic, export
from airtrace.plot import plot
from airtrace.report import report

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "testdata" / "pcaps" / "sample-sender.pcapng"
CLI = [sys.executable, "-m", "airtrace.cli"]


def _full_disk(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def test_a_failed_parquet_write_keeps_the_old_pair_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "tables"
    export.write_parquet([str(SAMPLE)], str(out))
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(before) == sorted(export.PAIR)
    import pyarrow.parquet as pq

    real = pq.ParquetWriter.write_table
    calls = []

    def second_fails(writer: object, table: object, *args: object, **kw: object) -> None:
        calls.append(1)
        if len(calls) == 2:  # the first capture's packets written, the second's hit a full disk
            _full_disk()
        real(writer, table, *args, **kw)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", second_fails)
    with pytest.raises(OSError) as e:
        export.write_parquet([str(SAMPLE), str(SAMPLE)], str(out))
    assert "packets.parquet" in str(e.value)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before, "the old pair, both files"
    assert _leftovers(tmp_path) == [], "no staging directory left"


def test_parquet_into_a_directory_with_other_files_or_a_file_is_one_line(tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "thesis.txt").write_text("mine")
    target = tmp_path / "a-file"
    target.write_text("x")
    for where in (busy, target):
        done = subprocess.run([*CLI, "analyze", "--parquet", str(where), str(SAMPLE)], capture_output=True, text=True)
        assert done.returncode == 1
        (line,) = [x for x in done.stderr.splitlines() if "error" in x]
        assert str(where) in line and "Traceback" not in done.stderr
    assert (busy / "thesis.txt").read_text() == "mine"
    assert _leftovers(tmp_path) == []


def test_plot_on_a_full_disk_keeps_the_old_file_and_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = airtrace.views.load([str(SAMPLE)])
    png = tmp_path / "r.png"
    plot(run, png, kind="tsg")
    before = png.read_bytes()
    import matplotlib.figure

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", _full_disk)
    for out in (png, tmp_path / "r.svg"):
        with pytest.raises(OSError) as e:
            plot(run, out, kind="tsg")
        assert str(out) in str(e.value)
    assert png.read_bytes() == before
    assert not (tmp_path / "r.svg").exists(), "no empty file"
    assert _leftovers(tmp_path) == []


def test_report_on_a_full_disk_or_into_a_directory_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = airtrace.views.load([str(SAMPLE)])
    out = tmp_path / "r.html"
    report(run, out, findings=[])
    before = out.read_bytes()
    monkeypatch.setattr(atomic.os, "fsync", _full_disk)
    with pytest.raises(OSError) as e:
        report(run, out, findings=[])
    assert str(out) in str(e.value)
    assert out.read_bytes() == before
    monkeypatch.undo()
    directory = tmp_path / "dir"
    directory.mkdir()
    with pytest.raises(IsADirectoryError) as e:
        report(run, directory, findings=[])
    assert str(directory) in str(e.value)
    assert _leftovers(tmp_path) == [] and not (tmp_path / "dir.tmp").exists()


def test_cleanup_removes_the_staging_directory_of_an_analyze_killed_with_sigkill(tmp_path: Path) -> None:
    """`airtrace analyze --parquet OUT` killed with SIGKILL leaves `.OUT.partial-PID-N`;
    `airtrace simulate --cleanup DIR` removes it once that process is gone (it said
    "nothing to clean up": the tag was hexadecimal, which the sweep does not take for
    a writer's). A staging directory of a process still alive stays."""
    import os
    import signal
    import time

    out = tmp_path / "tables"
    # Enough copies of the sample that the analysis is still running when it is killed.
    proc = subprocess.Popen([*CLI, "analyze", "--parquet", str(out), "--no-progress", *[str(SAMPLE)] * 400],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    try:
        while not _leftovers(tmp_path) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.005)
        staged = _leftovers(tmp_path)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "killed while it ran"
    assert len(staged) == 1 and staged[0].startswith(".tables.partial-"), staged
    live = tmp_path / f".other.partial-{os.getpid()}-7"  # a writer that is still running
    live.mkdir()
    done = subprocess.run([*CLI, "simulate", "--cleanup", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"airtrace: removed {tmp_path / staged[0]}\n"
    assert _leftovers(tmp_path) == [live.name]
