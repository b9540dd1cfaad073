"""The emulator stops within a second or two of SIGINT or SIGTERM, whenever they come
(during the setup, while a connect is pending on a link that loses everything, during a
transfer, during the teardown), leaving no namespace, device, process or partial bundle;
and every process a run starts ends with it, whatever it daemonized, or with
`airtrace emulate --cleanup` after a SIGKILL (issue 19 items 3 and 4). Needs root."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from test_emulate import SMALL, needs_root

pytestmark = needs_root

#: A transfer that outlasts every test: 20 MB at 2 Mbit/s.
LONG = SMALL.replace('bytes = "500 KB"', 'bytes = "20 MB"')

#: A link that loses every packet host a sends: the SYN never arrives, and a blocking
#: connect would wait out its retransmissions (about 130 s).
LOST = LONG.replace('queue_packets = 50', 'queue_packets = 50\n\n[link.forward]\nloss = { model = "bernoulli", p = 1.0 }')

#: The longest a run may take to stop after the signal.
STOP_S = 2.0


def start(scenario: Path, out: Path, *extra: str, output: int = subprocess.PIPE) -> subprocess.Popen[str]:
    """`airtrace emulate SCENARIO --out OUT EXTRA...` in the background."""
    argv = [sys.executable, "-m", "airtrace.cli", "emulate", str(scenario), "--out", str(out), *extra]
    return subprocess.Popen(argv, stdout=output, stderr=output, text=True)


def emulate(*args: str) -> subprocess.CompletedProcess[str]:
    """`airtrace emulate ARGS...`, failing the test after 60 s (a daemon that kept the
    output pipes open would otherwise hold it up for as long as it lives)."""
    argv = [sys.executable, "-m", "airtrace.cli", "emulate", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def end(*argv: str) -> None:
    """Kills what an old emulator left running (by pid, whose command line is `argv`)."""
    for pid in processes(*argv):
        os.kill(pid, signal.SIGKILL)


def namespaces(pid: int) -> list[str]:
    """The namespaces of the run in process `pid`."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in listed.splitlines() if line.startswith(f"airtrace-{pid}-")]


def processes(*argv: str) -> list[int]:
    """Pids of the live processes whose command line is exactly `argv`."""
    want = ("\0".join(argv) + "\0").encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes() == want:
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def wait_for(what: Callable[[], object], timeout: float, step: float = 0.005) -> None:
    t = time.monotonic()
    while not what():
        assert time.monotonic() - t < timeout, "timed out"
        time.sleep(step)


def stop(run: subprocess.Popen[str], sig: signal.Signals) -> tuple[float, str]:
    """Sends `sig` to the run; returns the seconds it took to end and its stderr. A run
    still going after 15 s is killed (and cleaned up) and fails the test."""
    t = time.monotonic()
    run.send_signal(sig)
    try:
        _, err = run.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        run.kill()
        run.communicate()
        emulate("--cleanup")
        pytest.fail(f"{sig.name}: the run was still going 15 s later")
    return time.monotonic() - t, err


def assert_nothing_left(tmp_path: Path, pid: int, out: Path) -> None:
    assert namespaces(pid) == [], "namespaces left"
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout
    assert f"at{pid}" not in links, "a device left in the host's namespace"
    assert not processes_mentioning(f"airtrace-{pid}-"), "a process left in the run's namespaces"
    assert not out.exists(), "a bundle from an interrupted run"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scenario.toml"], "partial bundle or temporary file left"


def processes_mentioning(word: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if word.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def check_interrupted(run: subprocess.Popen[str], sig: signal.Signals, tmp_path: Path, out: Path) -> None:
    took, err = stop(run, sig)
    assert "Traceback" not in err, err
    assert run.returncode == 130, err
    assert err.rstrip().endswith("airtrace: interrupted"), err
    assert took < STOP_S, f"{sig.name}: stopped after {took:.2f} s"
    assert_nothing_left(tmp_path, run.pid, out)


SIGNALS = [signal.SIGINT, signal.SIGTERM]


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_as_the_namespaces_appear_ends_the_run(tmp_path: Path, sig: signal.Signals) -> None:
    scenario, out = tmp_path / "scenario.toml", tmp_path / "bundle"
    scenario.write_text(LONG)
    run = start(scenario, out)
    wait_for(lambda: namespaces(run.pid), timeout=20, step=0.001)
    check_interrupted(run, sig, tmp_path, out)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_while_a_connect_is_pending_ends_the_run(tmp_path: Path, sig: signal.Signals) -> None:
    # Every SYN is lost: the connect waits (a blocking one for about 130 s).
    scenario, out = tmp_path / "scenario.toml", tmp_path / "bundle"
    scenario.write_text(LOST)
    run = start(scenario, out)
    wait_for(lambda: len(namespaces(run.pid)) == 2, timeout=20)
    time.sleep(1.5)  # the first SYN and its retransmission lost
    check_interrupted(run, sig, tmp_path, out)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_during_a_transfer_ends_the_run(tmp_path: Path, sig: signal.Signals) -> None:
    scenario, out = tmp_path / "scenario.toml", tmp_path / "bundle"
    scenario.write_text(LONG)
    run = start(scenario, out)
    wait_for(lambda: len(namespaces(run.pid)) == 2, timeout=20)
    time.sleep(1.5)
    check_interrupted(run, sig, tmp_path, out)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_during_the_teardown_ends_the_run(tmp_path: Path, sig: signal.Signals) -> None:
    # The command exits at once; the server ignores SIGTERM, so the teardown waits for
    # it (2 s, then SIGKILL): the signal comes in the middle of that wait.
    scenario, out = tmp_path / "scenario.toml", tmp_path / "bundle"
    scenario.write_text(LONG)
    mark = tmp_path.parent / f"{tmp_path.name}.done"
    server = "sh -c 'trap \"\" TERM; exec sleep 987'"
    run = start(scenario, out, "--server", server, "--", "touch", str(mark))
    try:
        wait_for(mark.exists, timeout=20)
        time.sleep(0.8)
        check_interrupted(run, sig, tmp_path, out)
        assert processes("sleep", "987") == []
    finally:
        mark.unlink(missing_ok=True)


def test_a_daemonized_command_ends_with_the_run(tmp_path: Path) -> None:
    scenario, out = tmp_path / "scenario.toml", tmp_path / "bundle"
    scenario.write_text(LONG)
    try:
        done = emulate(str(scenario), "--out", str(out), "--", "setsid", "-f", "sleep", "985")
        assert done.returncode == 0, done.stderr
        assert processes("sleep", "985") == [], "the daemonized command outlived the run"
        assert "ended the processes left in namespace" in done.stderr and "(sleep 985)" in done.stderr
        assert (out / "summary.json").is_file()
    finally:
        end("sleep", "985")


def test_a_daemonized_server_ends_with_the_run(tmp_path: Path) -> None:
    scenario, out = tmp_path / "scenario.toml", tmp_path / "bundle"
    scenario.write_text(LONG)
    try:
        done = emulate(str(scenario), "--out", str(out), "--server", "setsid -f sleep 986", "--", "sleep", "0.5")
        assert done.returncode == 0, done.stderr
        assert processes("sleep", "986") == [], "the daemonized server outlived the run"
        assert (out / "summary.json").is_file()
    finally:
        end("sleep", "986")


def test_cleanup_ends_what_a_killed_run_daemonized(tmp_path: Path) -> None:
    scenario, out = tmp_path / "scenario.toml", tmp_path / "bundle"
    scenario.write_text(LONG)
    command = ("sh", "-c", "setsid -f sleep 985; sleep 600")
    run = start(scenario, out, "--server", "setsid -f sleep 986", "--", *command, output=subprocess.DEVNULL)
    try:
        wait_for(lambda: processes("sleep", "985") and processes("sleep", "986"), timeout=20)
        before = processes("sleep", "985") + processes("sleep", "986")
        run.kill()
        run.wait()
        assert sorted(processes("sleep", "985") + processes("sleep", "986")) == sorted(before)
        assert len(namespaces(run.pid)) == 2, "a SIGKILLed run leaves its namespaces"
        done = emulate("--cleanup")
        assert done.returncode == 0, done.stderr
        assert "(sleep 985)" in done.stderr and "(sleep 986)" in done.stderr, done.stderr
        assert f"removed namespace airtrace-{run.pid}-0-a" in done.stderr
        wait_for(lambda: not processes("sleep", "985") and not processes("sleep", "986"), timeout=2)
        assert not processes("sleep", "600"), "the command's own group ended too"
        assert namespaces(run.pid) == []
    finally:
        if run.poll() is None:
            run.kill()
        emulate("--cleanup")
        for argv in (("sleep", "985"), ("sleep", "986"), ("sleep", "600")):
            end(*argv)
