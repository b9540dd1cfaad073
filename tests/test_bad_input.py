"""Bad input never crashes: truncations, bit flips and spliced records each give a
clean exit code and one-line messages naming the file; what can be read is used."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from airtrace.cli import main
from conftest import CORPUS

SEEDS = ["ppa_tcp_dupack.pcapng", "zeek_retransmit-fast009.pcap", "arkime_80211http.pcap", "tcptrace_long_rtt.dmp.gz"]


def run_cli(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str, str]:
    code = main(["analyze", "--json", "--no-progress", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def check_outcome(path: Path, code: int, out: str, err: str) -> None:
    assert "Traceback" not in err and "panicked" not in err
    for line in err.splitlines():
        assert line.startswith("airtrace: "), line
        assert str(path) in line, f"message does not name the file: {line}"
    report = json.loads(out)
    if code == 0:
        assert len(report["files"]) == 1 and report["files"][0]["frames"] >= 1
    else:
        assert code == 1
        assert report["files"] == []
        assert any(line.startswith("airtrace: error: ") for line in err.splitlines())


def mutations(data: bytes, rng: random.Random, n: int):
    """(name, bytes) pairs: truncations, bit flips, spliced and repeated records."""
    for i in range(n):
        kind = i % 4
        if kind == 0:
            cut = rng.randrange(0, len(data))
            yield f"truncate-{cut}", data[:cut]
        elif kind == 1:
            b = bytearray(data)
            for _ in range(rng.randint(1, 8)):
                pos = rng.randrange(len(b))
                b[pos] ^= 1 << rng.randrange(8)
            yield "bitflip", bytes(b)
        elif kind == 2:
            a, c = sorted(rng.sample(range(len(data)), 2))
            yield f"splice-{a}-{c}", data[:a] + data[c:]
        else:
            a = rng.randrange(len(data))
            yield f"repeat-{a}", data[:a] + data[a : a + 64] + data[a:]


@pytest.mark.parametrize("seed_name", SEEDS)
def test_mutated_captures_fail_cleanly(seed_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import gzip

    raw = (CORPUS / seed_name).read_bytes()
    if seed_name.endswith(".gz"):
        raw = gzip.decompress(raw)
    rng = random.Random(seed_name)
    for i, (name, data) in enumerate(mutations(raw, rng, 100)):
        path = tmp_path / f"{i:03d}-{name}.pcap"
        path.write_bytes(data)
        code, out, err = run_cli(capsys, path)
        check_outcome(path, code, out, err)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "empty file"),
        (b"<html>not a capture</html>", "not a capture file"),
        (b"\xd4\xc3\xb2", "file ends inside the magic number"),
    ],
)
def test_not_a_capture(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str) -> None:
    path = tmp_path / "bad.pcap"
    path.write_bytes(content)
    code, out, err = run_cli(capsys, path)
    assert code == 1
    assert err.count("\n") == 1 and message in err and str(path) in err


def test_truncated_tail_is_a_warning_and_the_rest_is_analysed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = (CORPUS / "zeek_retransmit-fast009.pcap").read_bytes()
    path = tmp_path / "cut.pcap"
    path.write_bytes(data[: len(data) - 10])
    code, out, err = run_cli(capsys, path)
    assert code == 0
    report = json.loads(out)["files"][0]
    assert report["frames"] == 38  # 39 frames, the last one cut
    assert "warning" in err and "record 39" in err


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, tmp_path / "nope.pcap")
    assert code == 1 and "nope.pcap" in err and err.count("\n") == 1


def test_one_bad_file_does_not_hide_the_good_one(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"garbage")
    good = CORPUS / "ppa_tcp_dupack.pcapng"
    proc = subprocess.run(
        [sys.executable, "-m", "airtrace.cli", "analyze", str(bad), str(good)], capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "ppa_tcp_dupack.pcapng: 9 frames" in proc.stdout
