"""The native `airtrace` command (crates/airtrace-cli) that pip installs: `airtrace
analyze` runs without Python and must print, warn and exit exactly as the Python
command line does (`python -m airtrace.cli`); every other command line is handed to
the Python command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, corpus_files

SAMPLE = ROOT / "testdata" / "pcaps" / "sample-sender.pcapng"


def launcher() -> Path:
    """The installed `airtrace` next to the interpreter, if it is the native program."""
    exe = Path(sys.executable).parent / ("airtrace.exe" if os.name == "nt" else "airtrace")
    if exe.is_file() and exe.read_bytes()[:4] in (b"\x7fELF", b"MZ\x90\x00", b"\xcf\xfa\xed\xfe"):
        return exe
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"the native airtrace command is not installed at {exe} (`pip install .` puts it there)")
    pytest.skip(f"no native airtrace at {exe} (maturin develop does not install it; pip install -e . does)")


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
