"""The native `airtrace` command (crates/airtrace-cli) that pip installs: `airtrace
analyze` and `airtrace simulate` run without Python and must print, warn and exit
exactly as the Python command line does (`python -m airtrace.cli`), and write the same
bundles; every other command line is handed to the Python command line. (The signals
that stop a simulation: tests/test_bundle_out.py, on both.)"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, corpus_files, native_airtrace

SAMPLE = ROOT / "testdata" / "pcaps" / "sample-sender.pcapng"


def launcher() -> Path:
    """The installed native `airtrace` next to the interpreter."""
    exe = native_airtrace()
    if exe is None:
        pytest.skip("no native airtrace next to the interpreter (maturin develop does not install it; pip install -e . does)")
    return exe


def run(cmd: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    proc = subprocess.run(cmd, capture_output=True, cwd=cwd, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def assert_same(args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    native = run([str(launcher()), *args], cwd)
    python = run([sys.executable, "-m", "airtrace.cli", *args], cwd)
    assert native == python, f"airtrace {' '.join(args)}"
    return native


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("launcher")
    data = SAMPLE.read_bytes()
    files = {
        "empty": b"",
        "not-a-capture": b"this is not a capture file at all\n" * 4,
        "truncated": data[: len(data) // 2],
        "bad-magic": b"\x00\x11\x22\x33" + data[4:200],
        "header-only": data[:28],
    }
    paths = {}
    for name, content in files.items():
        paths[name] = d / f"{name}.pcapng"
        paths[name].write_bytes(content)
    return paths


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_analyze_output_is_the_python_command_lines(json_flag: list[str], bad_files: dict[str, Path]) -> None:
    cwd = bad_files["empty"].parent
    code, out, _ = assert_same(["analyze", *json_flag, str(SAMPLE)], cwd)
    assert code == 0 and out
    for path in bad_files.values():
        assert_same(["analyze", *json_flag, "--no-progress", str(path)], cwd)
    code, _, err = assert_same(["analyze", *json_flag, str(bad_files["truncated"]), str(SAMPLE), "missing.pcap"], cwd)
    assert code == 1 and b"missing.pcap" in err


def test_analyze_matches_on_every_corpus_file(tmp_path: Path) -> None:
    files = [str(p) for p in corpus_files()]
    if not files:
        pytest.skip("no corpus")
    for f in files:
        assert_same(["analyze", f], tmp_path)
    assert_same(["analyze", "--json", *files], tmp_path)


def test_other_commands_go_to_the_python_command_line(tmp_path: Path) -> None:
    code, out, _ = assert_same(["--version"], tmp_path)
    assert code == 0 and out.startswith(b"airtrace ")
    assert assert_same([], tmp_path)[0] == 2
    assert assert_same(["analyze"], tmp_path)[0] == 2
    assert assert_same(["analyze", "--bogus", str(SAMPLE)], tmp_path)[0] == 2
    code, out, _ = assert_same(["demo"], tmp_path)
    assert code == 0 and b"sample-sender.pcapng" in out
    code, _, err = assert_same(["analyze", "--parquet", str(tmp_path / "pq"), str(SAMPLE)], tmp_path)
    assert code == 0 and b"packets.parquet" in err


def test_a_module_named_airtrace_in_the_working_directory_is_not_run(tmp_path: Path) -> None:
    (tmp_path / "airtrace").mkdir()
    (tmp_path / "airtrace" / "__init__.py").write_text("raise SystemExit('the wrong airtrace')\n")
    code, out, _ = run([str(launcher()), "--version"], tmp_path)
    assert code == 0 and out.startswith(b"airtrace ")


# Short runs of different kinds: one link, RPC, GSM RLP, a sniffer's view, a network of
# nodes (with its per-node summary), and more flows than one.
SCENARIOS = {
    "clean": ["--set", "duration=5 s"],
    "nfs_read_bursts": [],
    "gsm_rlp": ["--seed", "3"],
    "wlan_collisions": ["--set=duration=3 s"],
    "holland_vaidya_chain": ["--set", "network.chain.hops=3", "--set", 'duration="4 s"'],
    "hidden_terminals": ["--set", "duration=3 s"],
}


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["table", "json"])
@pytest.mark.parametrize("name", SCENARIOS)
def test_simulate_output_is_the_python_command_lines(name: str, json_flag: list[str], tmp_path: Path) -> None:
    code, out, err = assert_same(["simulate", str(ROOT / "scenarios" / f"{name}.toml"), *SCENARIOS[name], *json_flag], tmp_path)
    assert (code, err) == (0, NO_BUNDLE) and out
    assert list(tmp_path.iterdir()) == [], "nothing written without --out"


#: What a run without --out says (issue 17 item 4: it used to say nothing).
NO_BUNDLE = b"airtrace: no bundle written (--out DIR keeps the captures, logs and summary)\n"


def test_simulate_writes_the_same_bundle_and_says_so(tmp_path: Path) -> None:
    """Both into ./run from the same directory (the message names it), one after the other."""
    args = ["simulate", str(ROOT / "scenarios" / "wlan_collisions.toml"), "-o", "run", "--no-progress", "--set", "duration=2 s"]
    bundles = {}
    for way, cmd in (("native", [str(launcher())]), ("python", [sys.executable, "-m", "airtrace.cli"])):
        bundles[way] = run([*cmd, *args], tmp_path)
        shutil.move(tmp_path / "run", tmp_path / way)
    assert bundles["native"] == bundles["python"]
    code, out, err = bundles["native"]
    assert code == 0 and b"goodput" in out and err == b"airtrace: wrote run\n"
    files = sorted(p.name for p in (tmp_path / "native").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "python").iterdir()) and "summary.json" in files
    for f in files:
        assert (tmp_path / "native" / f).read_bytes() == (tmp_path / "python" / f).read_bytes(), f


def test_simulate_prints_python_floats_and_escapes_as_json_dumps(tmp_path: Path) -> None:
    """A scenario and flow named outside ASCII (table widths count characters), a goodput
    that is no round number, a network summary."""
    scenario = tmp_path / "naïve.toml"
    scenario.write_text(
        (ROOT / "scenarios" / "clean.toml").read_text(encoding="utf-8").replace('name = "clean"', 'name = "café \u2708 \U0001f4e1"')
        + '\n[[flow]]\nname = "flüß"\napp = "bulk"\nbytes = "123457 B"\n',
        encoding="utf-8",
    )
    for flags in ([], ["--json"]):
        code, out, _ = assert_same(["simulate", str(scenario), "--set", "duration=7 s", *flags], tmp_path)
        assert code == 0 and (b"\\u00fc" in out if flags else "flüß".encode() in out)
    chain = str(ROOT / "scenarios" / "holland_vaidya_chain.toml")
    code, out, _ = assert_same(["simulate", chain, "--set", "network.chain.hops=5", "--set", 'duration="3 s"', "--json"], tmp_path)
    assert code == 0 and b'"network"' in out


def test_simulate_errors_are_the_python_command_lines(tmp_path: Path) -> None:
    clean = str(ROOT / "scenarios" / "clean.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text('name = "broken"\nduration = "10 s"\n[link]\nrate = "fast"\n')
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.txt").write_text("thesis")
    cases = {
        ("simulate", clean, "--set", "link.rate=fast"): 1,  # an override the scenario refuses
        ("simulate", clean, "--set", "no_such_key=1"): 1,
        ("simulate", clean, "--set", "nokey"): 1,  # not KEY=VALUE
        ("simulate", str(tmp_path / "missing.toml")): 1,
        ("simulate", str(broken), "--json"): 1,
        ("simulate", clean, "--out", str(precious)): 1,  # not a bundle: not replaced
        ("simulate", "--json"): 2,  # no SCENARIO
        ("simulate",): 2,
    }
    for args, status in cases.items():
        code, out, err = assert_same(list(args), tmp_path)
        assert (code, out) == (status, b"") and err.startswith(b"airtrace: error: "), args
    assert (precious / "thesis.txt").read_text() == "thesis"


def test_simulate_leaves_other_forms_to_python(tmp_path: Path) -> None:
    clean = str(ROOT / "scenarios" / "clean.toml")
    for args in (
        ["simulate", "--help"],
        ["simulate", clean, "--seed", "x"],
        ["simulate", clean, clean],
        ["simulate", clean, "--jso"],
        ["simulate", "--cleanup", str(tmp_path)],
    ):
        code, _, _ = assert_same(args, tmp_path)
        assert code in (0, 2), args
