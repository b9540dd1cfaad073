"""A capture that another process truncates while airtrace reads it (issue 19, item 2):
a file rotated or rewritten under the reader. airtrace maps the file; touching a page
past the new end raised SIGBUS, which killed `airtrace analyze` (exit status 135, no
message) and, under `airtrace.read()`, the Python interpreter. Now the frames before the
cut are analysed, with a warning naming the file and the byte where reading stopped.

To cut the file at a known point of the reading, with the map already made, the reader
is asked to stop itself (SIGSTOP) when it first comes to a given byte: the environment
variable AIRTRACE_TEST_STOP_AT, a hook for tests (crates/airtrace-pcap/src/mapped.rs).
The test then truncates the file and lets the reader go on."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import native_airtrace
from pcapgen import ACK, PSH, SYN, Capture, ethernet, ipv4_tcp

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the map is guarded on Linux only")

SEGMENTS = 4000


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[int]]:
    """A 4.3 MB transfer (4,000 segments of 1,000 bytes, an ACK every second one), and
    the offset where each frame's record starts (frame n at starts[n - 1])."""
    cap = Capture()
    c, s = ("198.18.0.1", 40000), ("198.18.0.2", 80)
    cap.add(0.0, ethernet(ipv4_tcp(c[0], s[0], c[1], s[1], 100, 0, SYN)))
    cap.add(0.01, ethernet(ipv4_tcp(s[0], c[0], s[1], c[1], 500, 101, SYN | ACK)))
    cap.add(0.02, ethernet(ipv4_tcp(c[0], s[0], c[1], s[1], 101, 501, ACK)))
    for i in range(SEGMENTS):
        t = 0.03 + i * 0.001
        seq = 101 + i * 1000
        payload = bytes([i % 251]) * 1000
        cap.add(t, ethernet(ipv4_tcp(c[0], s[0], c[1], s[1], seq, 501, ACK | PSH, payload=payload)))
        if i % 2:
            cap.add(t + 0.0005, ethernet(ipv4_tcp(s[0], c[0], s[1], c[1], 501, seq + 1000, ACK)))
    path = cap.write(tmp_path_factory.mktemp("shrink") / "transfer.pcap")
    starts, at = [], 24
    for _, frame in cap.frames:
        starts.append(at)
        at += 16 + len(frame)
    assert at == path.stat().st_size
    return path, starts


def run_cut(cmd: list[str], path: Path, stop_at: int, cut_to: int, tmp_path: Path) -> tuple[int, str, str]:
    """Runs `cmd`, which reads `path`, until its reader stops at byte `stop_at`;
    truncates the file to `cut_to` bytes, lets it go on (and again at every later
    stop), and returns its exit status, stdout and stderr."""
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    env = dict(os.environ, AIRTRACE_TEST_STOP_AT=str(stop_at))
    with out.open("wb") as o, err.open("wb") as e:
        proc = subprocess.Popen(cmd, stdout=o, stderr=e, env=env)
    deadline = time.monotonic() + 120
    cut = False
    while True:
        pid, status = os.waitpid(proc.pid, os.WUNTRACED | os.WNOHANG)
        if pid == 0:
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                pytest.fail(f"{cmd} took more than 120 s")
            time.sleep(0.01)
            continue
        if os.WIFSTOPPED(status):
            if not cut:
                os.truncate(path, cut_to)
                cut = True
            os.kill(proc.pid, signal.SIGCONT)
            continue
        proc.returncode = os.waitstatus_to_exitcode(status)
        break
    assert cut, f"the reader never stopped at byte {stop_at} (AIRTRACE_TEST_STOP_AT): {err.read_text()}"
    return proc.returncode, out.read_text(), err.read_text()


def analyze_commands() -> list[list[str]]:
    exe = native_airtrace()
    native = [[str(exe)]] if exe else []
    return [*native, [sys.executable, "-m", "airtrace.cli"]]


@pytest.mark.parametrize("command", analyze_commands(), ids=lambda c: "native" if len(c) == 1 else "python")
def test_analyze_survives_a_cut_ahead_and_analyses_the_frames_before_it(
    command: list[str], capture: tuple[Path, list[int]], tmp_path: Path
) -> None:
    """The reader stops at byte 1,000,000; the file is cut 10 bytes into the first frame
    that starts after byte 2,000,000. Every frame before that one is analysed, and the
    warning says where reading stopped, from what length to what the file shrank, and
    how many frames were analysed; exit status 0, as for a file cut short before."""
    source, starts = capture
    path = tmp_path / "transfer.pcap"
    shutil.copy(source, path)
    size = path.stat().st_size
    k = next(n for n, at in enumerate(starts, 1) if at > 2_000_000)
    cut_to = starts[k - 1] + 10
    code, out, err = run_cut([*command, "analyze", "--json", "--no-progress", str(path)], path, 1_000_000, cut_to, tmp_path)
    assert code == 0, err
    message = f"{path}: byte {starts[k - 1]}: the file shrank from {size} to {cut_to} bytes while it was read"
    assert err == f"airtrace: warning: {message} (analysed the {k - 1} frames before it)\n"
    report = json.loads(out)["files"][0]
    assert report["frames"] == k - 1
    assert report["error"] == message
    conn = report["connections"][0]
    assert conn["a_to_b"]["data_bytes"] == 1000 * (k - 1 - 3 - (k - 1 - 3) // 3)


def test_read_survives_a_cut_behind_the_reader(capture: tuple[Path, list[int]], tmp_path: Path) -> None:
    """`airtrace.read()` in an interpreter with faulthandler on (as under pytest): the
    reader stops at byte 3,000,000 and the file is cut to 100,000 bytes, behind it. The
    interpreter lives on; the frames read before the cut are analysed, and `Trace.error`
    says where reading stopped."""
    source, starts = capture
    path = tmp_path / "transfer.pcap"
    shutil.copy(source, path)
    size = path.stat().st_size
    script = (
        "import json, sys, airtrace\n"
        "t = airtrace.read(sys.argv[1])\n"
        "print(json.dumps({'frames': t.frames, 'error': t.error, 'connections': len(t.connections)}))\n"
        "print('still alive')\n"
    )
    code, out, err = run_cut([sys.executable, "-X", "faulthandler", "-c", script, str(path)], path, 3_000_000, 100_000, tmp_path)
    assert code == 0, err
    assert err == ""
    result, alive = out.splitlines()
    assert alive == "still alive"
    result = json.loads(result)
    prefix = f"{path}: byte "
    suffix = f": the file shrank from {size} to 100000 bytes while it was read"
    error = result["error"]
    assert error.startswith(prefix) and error.endswith(suffix), error
    stopped = int(error[len(prefix) : -len(suffix)])
    assert 100_000 < stopped <= 3_000_000 and stopped in starts
    assert result["frames"] == starts.index(stopped)
    assert result["connections"] == 1
