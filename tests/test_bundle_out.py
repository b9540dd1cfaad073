"""Where `airtrace simulate --out` writes (issue 19, "Nothing lost, nothing left
behind"): what it refuses to replace, concurrent writers into one place, signals, and
what a killed run leaves."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import airtrace
from conftest import native_airtrace

ROOT = Path(__file__).resolve().parent.parent
CLEAN = ROOT / "scenarios" / "clean.toml"

# A run of minutes (1000 GB at 100 Mbit/s, ~10 M events/s) that writes nothing
# until its end: still running when a signal comes.
LONG = """
name = "long"
duration = "100000 s"
captures = []
link_log = false
tcp_state_log = false

[link]
rate = "100 Mbit/s"
delay = "20 ms"
queue_packets = 100

[[flow]]
app = "bulk"
bytes = "1000 GB"
"""


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "airtrace.cli", *args], capture_output=True, text=True, cwd=cwd)


def command(way: str) -> list[str]:
    """The command line that runs `airtrace`: the Python one, or the native one
    (crates/airtrace-cli, which simulates itself)."""
    if way == "python":
        return [sys.executable, "-m", "airtrace.cli"]
    exe = native_airtrace()
    if exe is None:
        pytest.skip("no native airtrace next to the interpreter")
    return [str(exe)]


WAYS = pytest.mark.parametrize("way", ["python", "native"])


def start(*args: str, way: str = "python") -> subprocess.Popen[str]:
    return subprocess.Popen([*command(way), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def leftovers(directory: Path) -> list[str]:
    """Temporary directories and lock files a writer leaves beside its bundles."""
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def assert_complete_bundle(out: Path) -> None:
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "link.jsonl",
        "meta.json",
        "receiver.pcap",
        "scenario.toml",
        "sender.pcap",
        "summary.json",
        "tcpstate.jsonl",
    ]
    assert json.loads((out / "summary.json").read_text())["flows"][0]["finished"]


def wait_for(condition, timeout: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.005)
    return False


def catches(pid: int, sig: int) -> bool:
    """True once process `pid` has a handler for `sig` (SigCgt in /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(caught >> (sig - 1) & 1)


def test_a_directory_that_is_not_a_bundle_is_refused_and_kept(tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "meta.json").write_text("{}")
    (precious / "thesis.txt").write_text("thesis")
    done = cli("simulate", str(CLEAN), "--out", str(precious), "--no-progress")
    assert done.returncode == 1
    assert done.stderr == (
        f"airtrace: error: {precious} exists and is not a bundle airtrace wrote (it holds thesis.txt); "
        "not replacing it; choose another --out or remove it\n"
    )
    assert (precious / "thesis.txt").read_text() == "thesis"
    assert sorted(p.name for p in precious.iterdir()) == ["meta.json", "thesis.txt"]
    assert leftovers(tmp_path) == []


def test_a_file_named_like_a_bundle_file_in_a_directory_is_not_enough(tmp_path: Path) -> None:
    # meta.json written by someone else: the right names, but not this tool's format.
    out = tmp_path / "lookalike"
    out.mkdir()
    (out / "meta.json").write_text('{"format": "something-else/1"}')
    done = cli("simulate", str(CLEAN), "--out", str(out), "--no-progress")
    assert done.returncode == 1
    assert "its meta.json is not an airtrace bundle's" in done.stderr
    assert (out / "meta.json").read_text() == '{"format": "something-else/1"}'


@pytest.mark.parametrize("out", [".", "..", "CWD"])
def test_the_current_directory_and_its_ancestors_are_refused_before_the_run(tmp_path: Path, out: str) -> None:
    bundle = tmp_path / "bundle"
    assert cli("simulate", str(CLEAN), "--out", str(bundle), "--no-progress").returncode == 0
    done = cli("simulate", str(CLEAN), "--out", str(bundle) if out == "CWD" else out, "--no-progress", cwd=bundle)
    assert done.returncode == 1
    assert "is the current directory or holds it; not replacing it" in done.stderr, done.stderr
    assert "simulated" not in done.stdout, "refused before the run"
    assert_complete_bundle(bundle)
    assert leftovers(tmp_path) == [] and leftovers(bundle) == []


def test_a_bundle_is_replaced(tmp_path: Path) -> None:
    out = tmp_path / "run"
    for seed in (1, 2):
        done = cli("simulate", str(CLEAN), "--out", str(out), "--seed", str(seed), "--no-progress")
        assert done.returncode == 0, done.stderr
        assert json.loads((out / "meta.json").read_text())["seed"] == seed
    assert_complete_bundle(out)
    assert leftovers(tmp_path) == []


def test_two_threads_simulating_into_one_place_leave_one_complete_bundle(tmp_path: Path) -> None:
    out = tmp_path / "run"
    for _ in range(5):
        barrier, errors = threading.Barrier(2), []

        def run(seed: int) -> None:
            barrier.wait()
            try:
                airtrace.simulate(CLEAN, out, seed=seed)
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(e)

        threads = [threading.Thread(target=run, args=(seed,)) for seed in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert_complete_bundle(out)
        assert leftovers(tmp_path) == []


@WAYS
def test_two_processes_simulating_into_one_place_leave_one_complete_bundle(tmp_path: Path, way: str) -> None:
    out = tmp_path / "run"
    for _ in range(10):
        runs = [start("simulate", str(CLEAN), "--out", str(out), "--seed", str(s), "--no-progress", way=way) for s in (1, 2)]
        results = [(p.communicate(timeout=30)[1], p.returncode) for p in runs]
        assert results == [("airtrace: wrote " + str(out) + "\n", 0)] * 2
        assert_complete_bundle(out)
        assert leftovers(tmp_path) == []


@WAYS
@pytest.mark.parametrize("moment", ["setup", "run"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_stops_the_run_at_once_and_leaves_nothing(
    tmp_path: Path, sig: signal.Signals, moment: str, way: str
) -> None:
    scenario = tmp_path / "long.toml"
    scenario.write_text(LONG)
    out = tmp_path / "run"
    with start("simulate", str(scenario), "--out", str(out), "--no-progress", way=way) as proc:
        try:
            if moment == "setup":
                # As soon as the command listens for the signals: before the run starts.
                assert wait_for(lambda: catches(proc.pid, signal.SIGHUP)), "the command handles SIGHUP"
            else:
                assert wait_for(lambda: any(".partial-" in p.name for p in tmp_path.iterdir())), "the run started"
                time.sleep(0.3)
            sent = time.monotonic()
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=2)
            took = time.monotonic() - sent
        finally:
            proc.kill()
    assert proc.returncode == 128 + sig, err
    assert took < 2
    name = "interrupted" if sig == signal.SIGINT else f"interrupted by {sig.name}"
    assert err == f"airtrace: {name}\n"
    assert leftovers(tmp_path) == [] and not out.exists()


@WAYS
def test_a_hangup_ignored_as_under_nohup_stays_ignored(tmp_path: Path, way: str) -> None:
    scenario = tmp_path / "long.toml"
    scenario.write_text(LONG)
    script = 'trap "" HUP; exec "$@"'
    args = ["simulate", str(scenario), "--out", str(tmp_path / "run"), "--no-progress"]
    with subprocess.Popen(
        ["sh", "-c", script, "sh", *command(way), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert wait_for(lambda: any(".partial-" in p.name for p in tmp_path.iterdir())), "the run started"
            proc.send_signal(signal.SIGHUP)
            time.sleep(0.3)
            assert proc.poll() is None, "still running"
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=2)
        finally:
            proc.kill()
    assert (proc.returncode, err) == (143, "airtrace: interrupted by SIGTERM\n")
    assert leftovers(tmp_path) == []


def killed_run(tmp_path: Path, way: str = "python") -> tuple[Path, Path]:
    """A long run into tmp_path/run killed with SIGKILL: (its destination, the partial
    bundle it left)."""
    scenario = tmp_path / "long.toml"
    scenario.write_text(LONG)
    with start("simulate", str(scenario), "--out", str(tmp_path / "run"), "--no-progress", way=way) as proc:
        started = wait_for(lambda: any(".partial-" in p.name for p in tmp_path.iterdir()))
        proc.kill()
    assert started, "the run started"
    (partial,) = [p for p in tmp_path.iterdir() if ".partial-" in p.name]
    return tmp_path / "run", partial


@WAYS
def test_the_next_run_removes_what_a_killed_run_left(tmp_path: Path, way: str) -> None:
    out, partial = killed_run(tmp_path, way)
    done = cli("simulate", str(CLEAN), "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    assert not partial.exists()
    assert_complete_bundle(out)
    assert leftovers(tmp_path) == []


def test_cleanup_removes_what_killed_runs_left_and_nothing_else(tmp_path: Path) -> None:
    _, partial = killed_run(tmp_path)
    dead = subprocess.Popen(["true"])  # a process id nobody uses any more
    dead.wait()
    old_style = tmp_path / f".other.partial-{dead.pid}"  # as the writer named them before
    old_style.mkdir()
    (old_style / "sender.pcap").write_bytes(b"x" * 1000)
    live = tmp_path / f".mine.partial-{os.getpid()}-0"  # a run of this process, going on
    live.mkdir()
    done = cli("simulate", "--cleanup", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert sorted(done.stderr.splitlines()) == sorted(f"airtrace: removed {p}" for p in (partial, old_style))
    assert leftovers(tmp_path) == [live.name]
    again = cli("simulate", "--cleanup", str(tmp_path))
    assert (again.returncode, again.stderr) == (0, "airtrace: nothing to clean up\n")


def test_cleanup_takes_no_scenario(tmp_path: Path) -> None:
    done = cli("simulate", str(CLEAN), "--cleanup", str(tmp_path))
    assert done.returncode == 2
    assert "--cleanup takes no SCENARIO" in done.stderr
