"""Damaged bundles and bad arguments on the command line (issue 19, items 10 and 11): one
line naming the file and the place, exit code 1 for unreadable input and 2 for usage
errors, never a traceback; a damaged line of a log is skipped with a warning naming the
file and line, and the rest is used."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import airtrace
from airtrace import bundlefiles, views
from airtrace.diagnosis import AIR_KINDS
from pcapgen import ACK, PSH, SYN, ethernet, ipv4_tcp

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "airtrace.cli", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def clean(done: subprocess.CompletedProcess[str]) -> list[str]:
    """stderr's lines, checked to be one-line messages of airtrace's own (argparse's
    usage lines before a usage error left out)."""
    assert "Traceback" not in done.stderr and "panicked" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith(("usage: ", " "))]
    assert all(line.startswith("airtrace") for line in lines), done.stderr
    return lines


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small bundle with every kind of file: captures at both ends and on the air, the
    link log, the TCP state log."""
    out = tmp_path_factory.mktemp("bundles") / "wlan"
    airtrace.simulate(ROOT / "scenarios" / "wlan_collisions.toml", out, set={"flow[1].bytes": "200 kB"})
    return out


def damaged(bundle: Path, tmp_path: Path, name: str, content: bytes) -> Path:
    """A copy of `bundle` with its file `name` replaced by `content`."""
    copy = tmp_path / "bundle"
    shutil.copytree(bundle, copy)
    (copy / name).write_bytes(content)
    return copy


def with_line(path: Path, n: int, edit) -> bytes:  # type: ignore[no-untyped-def]
    """The file's bytes with line `n` (1-based) replaced by edit(record)."""
    lines = path.read_bytes().splitlines(keepends=True)
    lines[n - 1] = edit(json.loads(lines[n - 1])) + b"\n"
    return b"".join(lines)


def without(record: dict, key: str) -> bytes:  # type: ignore[type-arg]
    return json.dumps({k: v for k, v in record.items() if k != key}).encode()


def as_string(record: dict, key: str) -> bytes:  # type: ignore[type-arg]
    return json.dumps({**record, key: str(record[key])}).encode()


# (file, what it becomes, message naming the place) for the logs: a damaged line is
# skipped with a warning and the rest is used, by diagnose, report and plot alike.
LOG_DAMAGE = {
    "link_cut_short": ("link.jsonl", lambda p: p.read_bytes()[: len(p.read_bytes()) // 2], "link.jsonl:"),
    "link_garbage_line": ("link.jsonl", lambda p: with_line(p, 10, lambda r: b"\x81garbage{"), "link.jsonl:10: not UTF-8"),
    "link_no_kind": ("link.jsonl", lambda p: with_line(p, 10, lambda r: without(r, "kind")), "link.jsonl:10: no `kind`"),
    "link_string_t_ns": (
        "link.jsonl",
        lambda p: with_line(p, 10, lambda r: as_string(r, "t_ns")),
        "link.jsonl:10: `t_ns` is not an integer",
    ),
    "tcpstate_string_t_ns": (
        "tcpstate.jsonl",
        lambda p: with_line(p, 10, lambda r: as_string(r, "t_ns")),
        "tcpstate.jsonl:10: `t_ns` is not an integer",
    ),
    "tcpstate_cut_short": ("tcpstate.jsonl", lambda p: p.read_bytes()[:-30], "tcpstate.jsonl:"),
}


@pytest.mark.parametrize("damage", sorted(LOG_DAMAGE))
def test_a_damaged_log_line_is_skipped_with_a_warning(bundle: Path, tmp_path: Path, damage: str) -> None:
    name, edit, message = LOG_DAMAGE[damage]
    copy = damaged(bundle, tmp_path, name, edit(bundle / name))
    for args in (["diagnose"], ["report", "-o", tmp_path / "r.html"], ["plot", "-o", tmp_path / "p.png"]):
        if args[0] == "diagnose" and name != "link.jsonl":
            continue  # the diagnosis does not read tcpstate.jsonl
        done = cli(args[0], copy, *args[1:])
        lines = clean(done)
        assert done.returncode == 0, done.stderr
        assert any(line.startswith("airtrace: warning: ") and message in line for line in lines), (args, lines)
    assert (tmp_path / "r.html").stat().st_size > 0 and (tmp_path / "p.png").stat().st_size > 0


def test_the_rest_of_a_damaged_log_is_used(bundle: Path, tmp_path: Path) -> None:
    whole = views.load(bundle).link
    DamagedInput = airtrace.DamagedInput
    assert whole is not None
    copy = damaged(bundle, tmp_path, "link.jsonl", with_line(bundle / "link.jsonl", 10, lambda r: b"[1, 2"))
    with pytest.warns(DamagedInput, match=r"link\.jsonl:10: not JSON at column 6"):
        link = views.load(copy).link
    assert link is not None and len(link) == len(whole) - 1
    assert list(link["t_ns"]) == [t for i, t in enumerate(whole["t_ns"]) if i != 9]


def test_a_log_of_garbage_gives_a_few_warnings_not_thousands(tmp_path: Path) -> None:
    log = tmp_path / "link.jsonl"
    log.write_bytes(b"garbage\n" * 10_000 + b'{"t_ns": 5, "dir": "down", "kind": "link_reset"}\n')
    from airtrace import bundlefiles

    with pytest.warns(airtrace.DamagedInput) as caught:
        records = list(bundlefiles.records(log, bundlefiles.LINK_LOG))
    assert [r["t_ns"] for r in records] == [5]
    assert len(caught) == bundlefiles.WARN_LINES + 1
    assert str(caught[-1].message) == f"{log}: {10_000 - bundlefiles.WARN_LINES} more damaged lines skipped"


@pytest.mark.parametrize(
    "content, message",
    [(b"[]", "meta.json: not a JSON object"), (b'{"files": ', "meta.json: line 1 column 11: Expecting value")],
)
def test_a_damaged_meta_json_is_named(bundle: Path, tmp_path: Path, content: bytes, message: str) -> None:
    copy = damaged(bundle, tmp_path, "meta.json", content)
    for command in ("report", "plot"):
        done = cli(command, copy, "-o", tmp_path / f"out.{'html' if command == 'report' else 'png'}")
        assert done.returncode == 1 and clean(done) == [f"airtrace: error: {copy}/{message}"]
    # The diagnosis needs no more than the sender capture: it goes on, and says so.
    done = cli("diagnose", copy)
    assert done.returncode == 0
    assert f"airtrace: warning: {copy}/{message}; diagnosing without it" in clean(done)
    with pytest.raises(ValueError, match="meta.json"):
        views.load(copy)


def test_an_endless_meta_json_is_refused_at_the_bound(bundle: Path, tmp_path: Path) -> None:
    copy = damaged(bundle, tmp_path, "meta.json", b"")
    (copy / "meta.json").unlink()
    (copy / "meta.json").symlink_to("/dev/zero")
    done = cli("report", copy, "-o", tmp_path / "out.html")
    assert done.returncode == 1
    assert clean(done) == [f"airtrace: error: {copy}/meta.json: larger than the limit of {bundlefiles.MAX_OBJECT_BYTES} bytes"]


@pytest.mark.parametrize("content, message", [(b"", "empty file"), (b"\x17garbage" * 100, "not a capture file")])
def test_an_unreadable_sender_capture_is_one_line_and_exit_1(
    bundle: Path, tmp_path: Path, content: bytes, message: str
) -> None:
    copy = damaged(bundle, tmp_path, "sender.pcap", content)
    for args in (["diagnose"], ["report", "-o", tmp_path / "r.html"], ["plot", "-o", tmp_path / "p.png"]):
        done = cli(args[0], copy, *args[1:])
        assert done.returncode == 1
        [line] = clean(done)
        assert line.startswith(f"airtrace: error: {copy}/sender.pcap") and message in line


@pytest.mark.parametrize("content, message", [(b"", "empty file"), (b"\x17garbage" * 100, "not a capture file")])
def test_an_unreadable_air_capture_leaves_the_rest(bundle: Path, tmp_path: Path, content: bytes, message: str) -> None:
    copy = damaged(bundle, tmp_path, "air.pcap", content)
    expected = cli("diagnose", bundle, "--json")
    done = cli("diagnose", copy, "--json")
    assert done.returncode == 0
    assert any(f"{copy}/air.pcap" in line and message in line for line in clean(done))
    found = [f["kind"] for f in json.loads(done.stdout)]
    assert found == [f["kind"] for f in json.loads(expected.stdout) if f["kind"] not in AIR_KINDS]
    done = cli("report", copy, "-o", tmp_path / "r.html")
    assert done.returncode == 0 and any("air capture left out" in line for line in clean(done))


# ---- item 11: inputs reported for what they are ----


def test_diagnose_refuses_a_directory_that_is_not_a_bundle(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a bundle\n")
    for command in ("diagnose", "report", "plot"):
        done = cli(command, tmp_path, *([] if command == "diagnose" else ["-o", tmp_path / "x.html"]))
        assert done.returncode == 1
        assert clean(done) == [f"airtrace: error: {tmp_path}: a directory, but not a bundle (no meta.json)"]


def test_diagnose_refuses_a_bundle_without_a_capture(bundle: Path, tmp_path: Path) -> None:
    copy = damaged(bundle, tmp_path, "meta.json", (bundle / "meta.json").read_bytes())
    for capture in copy.glob("*.pcap"):
        capture.unlink()
    done = cli("diagnose", copy)
    assert done.returncode == 1 and "no findings" not in done.stdout
    assert clean(done) == [f"airtrace: error: {copy}: the bundle has no capture (scenario `captures = []`)"]


def pcapng(frames: list[tuple[int, bytes]]) -> bytes:
    """A little-endian pcapng file: a section, one Ethernet interface, an Enhanced
    Packet Block per (interface id, frame)."""

    def block(kind: int, body: bytes) -> bytes:
        body += b"\0" * (-len(body) % 4)
        return struct.pack("<II", kind, len(body) + 12) + body + struct.pack("<I", len(body) + 12)

    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += block(1, struct.pack("<HHI", 1, 0, 0))
    for i, (interface, frame) in enumerate(frames):
        units = (1_700_000_000 + i) * 1_000_000
        out += block(6, struct.pack("<IIIII", interface, units >> 32, units & 0xFFFFFFFF, len(frame), len(frame)) + frame)
    return out


def test_one_bad_pcapng_block_does_not_end_the_reading(tmp_path: Path) -> None:
    """An Enhanced Packet Block for an interface the section lacks, its lengths right:
    skipped with a warning naming the file and byte, the packets after it analysed."""
    a, b = ("10.0.0.1", 1000), ("10.0.0.2", 80)
    segments = [
        ipv4_tcp(a[0], b[0], a[1], b[1], 0, 0, SYN),
        ipv4_tcp(b[0], a[0], b[1], a[1], 0, 1, SYN | ACK),
        ipv4_tcp(a[0], b[0], a[1], b[1], 1, 1, ACK),
        ipv4_tcp(a[0], b[0], a[1], b[1], 1, 1, ACK | PSH, payload=b"x" * 100),
        ipv4_tcp(b[0], a[0], b[1], a[1], 1, 101, ACK),
    ]
    frames = [(0, ethernet(s)) for s in segments]
    frames.insert(3, (5, ethernet(segments[3])))  # frame 4: interface 5 of 1
    path = tmp_path / "one-bad-block.pcapng"
    path.write_bytes(pcapng(frames))
    done = cli("analyze", "--json", "--no-progress", path)
    assert done.returncode == 0, done.stderr
    [line] = clean(done)
    assert line.startswith(f"airtrace: warning: {path}: record 4 at byte ") and "interface 5" in line, line
    [report] = json.loads(done.stdout)["files"]
    assert report["frames"] == 6 and report["error"] is None
    [conn] = report["connections"]
    assert conn["a_to_b"]["unique_bytes"] == 100
    assert airtrace.read(path).warnings == [line.removeprefix("airtrace: warning: ")]


# ---- item 10: arguments ----

SCENARIO = ROOT / "scenarios" / "clean.toml"


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0", "1e10"])
def test_emulate_refuses_an_impossible_max_duration(tmp_path: Path, value: str) -> None:
    done = cli("emulate", SCENARIO, "--out", tmp_path / "run", "--max-duration", value)
    assert done.returncode == 2 and not (tmp_path / "run").exists()
    assert clean(done)[-1] == (
        f"airtrace emulate: error: argument --max-duration: '{value}' is not a time in seconds above 0 and at most 1e9"
    )
    with pytest.raises(ValueError, match="max duration"):
        airtrace.emulate(SCENARIO, tmp_path / "run", max_duration_s=float(value))


@pytest.mark.parametrize("command", ["simulate", "emulate"])
@pytest.mark.parametrize("value", ["-1", str(2**64), "seven"])
def test_a_seed_out_of_range_is_a_usage_error(tmp_path: Path, command: str, value: str) -> None:
    done = cli(command, SCENARIO, "--out", tmp_path / "run", f"--seed={value}")
    assert done.returncode == 2 and not (tmp_path / "run").exists()
    assert clean(done)[-1] == (
        f"airtrace {command}: error: argument --seed: '{value}' is not a seed (an integer from 0 to 2**64 - 1)"
    )


def test_the_library_refuses_a_seed_out_of_range(tmp_path: Path) -> None:
    for seed in (-1, 2**64):
        with pytest.raises(ValueError, match="is not an integer from 0 to 2"):
            airtrace.simulate(SCENARIO, tmp_path / "run", seed=seed)
        with pytest.raises(ValueError, match="is not an integer from 0 to 2"):
            airtrace.emulate(SCENARIO, tmp_path / "run", seed=seed)


def test_emulate_server_with_unbalanced_quotes_is_a_usage_error(tmp_path: Path) -> None:
    done = cli("emulate", SCENARIO, "--out", tmp_path / "run", "--server", "'unbalanced")
    assert done.returncode == 2 and not (tmp_path / "run").exists()
    assert clean(done) == ["airtrace: error: --server: No closing quotation in \"'unbalanced\""]


@pytest.mark.parametrize("option", ["--server", "--"])
def test_emulate_reports_a_program_that_does_not_exist(tmp_path: Path, option: str) -> None:
    missing = str(tmp_path / "no-such-program")
    done = cli("emulate", SCENARIO, "--out", tmp_path / "run", option, missing)
    assert done.returncode == 1 and not (tmp_path / "run").exists()
    what = "server" if option == "--server" else "command"
    assert clean(done) == [f"airtrace: error: {what}: no program {missing!r} (not found, or not executable)"]
    assert not os.path.exists(tmp_path / "run")


# ---- item 7: limits ----


def limited_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """cli() in at most 2 GB of address space: a reader without a bound fails, not the machine."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run(
        [sys.executable, "-m", "airtrace.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
    )


def scenario_with(tmp_path: Path, old: str, new: str) -> Path:
    path = tmp_path / "s.toml"
    text = SCENARIO.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return path


def test_an_endless_scenario_file_is_refused(tmp_path: Path) -> None:
    done = limited_cli("simulate", "/dev/zero", "--out", tmp_path / "run")
    assert done.returncode == 1
    assert clean(done) == ["airtrace: error: /dev/zero: cannot read the scenario: larger than the limit of 1048576 bytes"]


def test_an_endless_trace_file_is_refused(tmp_path: Path) -> None:
    scenario = scenario_with(tmp_path, 'rate = "10 Mbit/s"', 'trace = "/dev/zero"')
    done = limited_cli("simulate", scenario, "--out", tmp_path / "run")
    assert done.returncode == 1
    [line] = clean(done)
    assert line.startswith("airtrace: error: ") and "/dev/zero" in line and "larger than the limit" in line, line


def test_an_impossible_time_is_refused_as_the_scenario_is_read(tmp_path: Path) -> None:
    scenario = scenario_with(tmp_path, 'delay = "20 ms"', 'delay = "1e9 s"')
    done = limited_cli("simulate", scenario, "--out", tmp_path / "run")
    assert done.returncode == 1 and not (tmp_path / "run").exists()
    assert clean(done) == [
        f'airtrace: error: {scenario}:10:9: duration "1e9 s" is longer than any run can be '
        "(at most 10^7 s, 116 days)"
    ]


@pytest.mark.parametrize(
    "old, new",
    [
        ('delay = "20 ms"', 'delay = "20 ' + "x" * 500_000 + '"'),  # a unit
        ('sndbuf = "64 KiB"', 'sndbuf = "64 KiB"\nvariant = "' + "x" * 500_000 + '"'),  # a checked name
        ('app = "bulk"', 'app = "' + "x" * 500_000 + '"'),  # serde's own message
    ],
)
def test_long_input_is_not_echoed_back_whole(tmp_path: Path, old: str, new: str) -> None:
    scenario = scenario_with(tmp_path, old, new)
    done = limited_cli("simulate", scenario, "--out", tmp_path / "run")
    assert done.returncode == 1
    [line] = clean(done)
    assert line.startswith(f"airtrace: error: {scenario}:") and len(line) < 500, line[:1000]
