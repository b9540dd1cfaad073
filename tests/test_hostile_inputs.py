"""The hostile user (issue 19): devices, pipes and bombs given as captures, and scenarios
fuzzed in their sizes and times. Each input ends in one of two ways: a result, or one
line naming the file and what is wrong; never a traceback, a panic, a hang or memory
without bound. (Mutated captures: tests/test_bad_input.py; a capture shrinking while it
is read: tests/test_shrinking_capture.py; damaged bundles: tests/test_damaged_input.py;
the parsers under cargo-fuzz: scripts/fuzz-ci.sh, run by `make test`.)"""

from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import airtrace
from conftest import CORPUS

ROOT = Path(__file__).resolve().parent.parent
AIRTRACE = Path(sys.executable).parent / "airtrace"
CLEAN = ROOT / "scenarios" / "clean.toml"

#: The classic pcap file header: microseconds, Ethernet, snap length 65535.
PCAP_HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
MiB = 1 << 20


def analyze(path: Path | str, tmp_path: Path) -> tuple[int, str, str, float]:
    """`airtrace analyze PATH` (the native program): exit code, stdout, stderr and the
    peak resident memory in MiB, as /usr/bin/time reads it from the kernel (a child
    forked from this big process would count this process's memory as its own)."""
    peak = tmp_path / "peak.txt"
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%M", "-o", str(peak), str(AIRTRACE), "analyze", "--no-progress", str(path)],
        capture_output=True, text=True, timeout=120,
    )
    return done.returncode, done.stdout, done.stderr, int(peak.read_text().split()[-1]) / 1024


def one_line_naming(err: str, path: Path | str, what: str) -> None:
    assert "Traceback" not in err and "panicked" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"airtrace: error: {path}"), err
    assert what in lines[0], err


def gzip_bomb(path: Path, head: bytes, zeros_mib: int) -> Path:
    """`head` then `zeros_mib` MiB of zero bytes, gzip-compressed (about 1000:1)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    with path.open("wb") as f:
        f.write(packer.compress(head))
        zeros = bytes(MiB)
        for _ in range(zeros_mib):
            f.write(packer.compress(zeros))
        f.write(packer.flush())
    return path


@pytest.mark.parametrize(
    ("device", "what"),
    [
        ("/dev/null", "empty file"),
        ("/dev/zero", "not a capture file (magic number 0x00000000)"),
        ("/dev/urandom", "not a capture file"),
        ("/proc/self/status", "not a capture file"),
    ],
)
def test_a_device_given_as_a_capture_is_one_line(device: str, what: str, tmp_path: Path) -> None:
    code, out, err, _ = analyze(device, tmp_path)
    assert code == 1 and out == ""
    one_line_naming(err, device, what)
    with pytest.raises(airtrace.AnalysisError, match=re.escape(what)):
        airtrace.read(device)


def test_a_capture_read_from_a_named_pipe_is_analysed(tmp_path: Path) -> None:
    fifo = tmp_path / "live.pcap"
    os.mkfifo(fifo)
    data = (CORPUS / "zeek_retransmit-fast009.pcap").read_bytes()

    def feed() -> None:
        with fifo.open("wb") as f:
            f.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    code, out, err, _ = analyze(fifo, tmp_path)
    writer.join(timeout=10)
    assert code == 0 and err == "", err
    assert f"{fifo}: 39 frames" in out


def test_a_gzip_bomb_of_empty_records_is_read_in_flat_memory(tmp_path: Path) -> None:
    """A 0.25 MB file that inflates to 256 MiB: 16.8 million empty records."""
    bomb = gzip_bomb(tmp_path / "bomb.pcap.gz", PCAP_HEADER, 256)
    assert bomb.stat().st_size < MiB
    code, out, err, peak_mib = analyze(bomb, tmp_path)
    assert code == 0, err
    assert "16777216 frames, 0 TCP, 0 connections" in out
    assert "Traceback" not in err and "panicked" not in err
    assert peak_mib < 100, f"peak {peak_mib:.0f} MiB for a bomb read as a stream"


def test_a_gzip_bomb_claiming_a_4_gb_record_is_refused_before_allocating(tmp_path: Path) -> None:
    record = struct.pack("<IIII", 0, 0, 0xFFFFFFFF, 0xFFFFFFFF)
    bomb = gzip_bomb(tmp_path / "claim.pcap.gz", PCAP_HEADER + record, 64)
    code, out, err, peak_mib = analyze(bomb, tmp_path)
    assert code == 1
    one_line_naming(err, bomb, "record 1 at byte 24 of the decompressed data: captured length 4294967295 exceeds")
    assert peak_mib < 100


# -- Scenarios fuzzed in their sizes and times ---------------------------------------

#: Times as a user may write them, from the sensible to the impossible.
TIMES = st.sampled_from(
    [
        "0 s", "1 ns", "1e-9 s", "999 ms", "2 s", "1e7 s", "10000001 s", "1e9 s", "1e300 s", "-1 s", "nan s",
        "inf s", "18446744073709551616 ns", "1 fortnight", "", "s", "10", "0x10 s", "1_000 ms", "٣ s",
    ]
)
#: Sizes, likewise.
SIZES = st.sampled_from(
    [
        "0 B", "1 B", "1460 B", "64 KiB", "10 MB", "1 GB", "1 GiB", "1 TB", "1e30 B", "-1 B", "nan B", "18446744073709551616 B",
        "1 KiB", "2 kB", "", "B", "1 parsec",
    ]
)
#: Durations: the times above less those that are allowed and long (10^7 s is the
#: largest allowed; a run that long is not what this test is for).
DURATIONS = TIMES.filter(lambda t: t != "1e7 s")
#: Rates: none above 100 Mbit/s that would be allowed, so that a run stays short.
RATES = st.sampled_from(
    ["1 bit/s", "1 kbit/s", "2 Mbit/s", "100 Mbit/s", "0 bit/s", "-1 Mbit/s", "nan Mbit/s", "inf bit/s", "Mbit/s", "fast"]
)
COUNTS = st.one_of(st.integers(min_value=-(2**70), max_value=2**70), st.sampled_from(["0", "many", "1e3"]))

#: Keys of scenarios/clean.toml whose values are sizes, times, rates and counts.
FIELDS = {
    "duration": DURATIONS,
    "link.delay": TIMES,
    "link.rate": RATES,
    "link.queue_packets": COUNTS,
    "flow[1].bytes": SIZES,
    "flow[1].start": TIMES,
    "flow[1].tcp.sndbuf": SIZES,
    "flow[1].tcp.rcvbuf": SIZES,
    "flow[1].tcp.mss": COUNTS,
    "snaplen": SIZES,
}


def toml_value(value: object) -> str:
    return str(value) if isinstance(value, int) else '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(choices=st.dictionaries(st.sampled_from(sorted(FIELDS)), st.none(), min_size=1, max_size=4).flatmap(
    lambda keys: st.fixed_dictionaries({k: FIELDS[k] for k in keys})
))
def test_a_scenario_fuzzed_in_sizes_and_times_runs_or_is_refused_in_one_line(
    choices: dict[str, object], tmp_path: Path
) -> None:
    """Each value is checked as the scenario is read; a run that starts is bounded by the
    link's rate and the capped duration, so it ends. Runs are kept short: at most 30
    simulated seconds unless the fuzzed duration is refused, at most 100 Mbit/s."""
    sets = [f"{key}={toml_value(value)}" for key, value in choices.items()]
    if "duration" not in choices:
        sets.append('duration="30 s"')
    try:
        summary = airtrace.simulate(CLEAN, set=["captures=[]", "link_log=false", "tcp_state_log=false", *sets])
    except airtrace.ScenarioError as e:
        message = str(e)
        assert message.count("\n") == 0, message
        assert message.startswith(str(CLEAN)), message
        assert len(message) < 600, "a quoted value is cut short"
        return
    # A run the scenario allowed: its numbers are numbers.
    flow = summary["flows"][0]
    assert flow["bytes_delivered"] >= 0 and flow["goodput_bps"] >= 0


def test_fuzzing_reaches_both_outcomes() -> None:
    """The strategies above are not all refusals: a sensible draw runs."""
    ok = airtrace.simulate(
        CLEAN, set=["captures=[]", "link_log=false", "tcp_state_log=false", 'duration="2 s"', 'flow[1].bytes="64 KiB"']
    )
    assert ok["flows"][0]["bytes_delivered"] == 65536
    with pytest.raises(airtrace.ScenarioError, match="duration"):
        airtrace.simulate(CLEAN, set=['duration="10000001 s"'])
