"""The build backend: maturin's, plus the native `airtrace` command.

A wheel of airtrace holds the Python package with its extension module (built by
maturin from crates/airtrace-py) and, as its script `airtrace`, the native program of
crates/airtrace-cli: `airtrace analyze` runs without starting Python, and every other
command goes on to the Python command line (see crates/airtrace-cli/src/main.rs).

maturin builds the Cargo targets of one crate per wheel (a Python extension, or
programs, not both: PyO3/maturin#368), and its `data` option wants the files in
place before any build starts, even for metadata and `maturin develop`. So this
backend lets maturin build its wheel, then builds the program with cargo (the crates
they share are compiled once, in the same target directory) and adds it to the
wheel as `<name>-<version>.data/scripts/airtrace`, which installers put in the
environment's `bin` directory, with its line in the wheel's RECORD. Editable wheels
(`pip install -e`) get it the same way. `maturin develop` does not use this backend:
it installs the package without the command (use `python -m airtrace.cli`, or
`pip install -e .`).
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, Mapping

import maturin
from maturin import (  # noqa: F401  (the rest of the PEP 517 and PEP 660 interface)
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

ROOT = Path(__file__).resolve().parent.parent
EXE = "airtrace.exe" if sys.platform == "win32" else "airtrace"


def _build_launcher() -> Path:
    """cargo build --release -p airtrace-cli; returns the program's path."""
    env = None
    if shutil.which("cargo") is None:
        env = maturin._get_env()  # as maturin does: Rust in a temporary directory
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    if not target.is_absolute():
        target = ROOT / target
    cmd = ["cargo", "build", "--release", "--package", "airtrace-cli", "--bin", "airtrace"]
    print("airtrace_build: " + " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)
    return target / "release" / EXE


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _add_script(wheel: Path, program: Path) -> None:
    """Rewrites `wheel` with `program` as its script `airtrace`, listed in RECORD."""
    data = program.read_bytes()
    tmp = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        names = src.namelist()
        record = next(n for n in names if n.endswith(".dist-info/RECORD"))
        namever = record.split("/", 1)[0].removesuffix(".dist-info")
        script = f"{namever}.data/scripts/{EXE}"
        for info in src.infolist():
            if info.filename not in (record, script):
                dst.writestr(info, src.read(info))
        info = zipfile.ZipInfo(script, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o100755 << 16  # a regular file, executable
        info.compress_type = zipfile.ZIP_DEFLATED
        dst.writestr(info, data)
        lines = [ln for ln in src.read(record).decode().splitlines() if ln and not ln.startswith(f"{script},")]
        lines.insert(len(lines) - 1 if lines and lines[-1].startswith(f"{record},") else len(lines),
                     f"{script},{_record_hash(data)},{len(data)}")
        dst.writestr(src.getinfo(record), "\n".join(lines) + "\n")
    tmp.replace(wheel)


def build_wheel(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    name = maturin.build_wheel(wheel_directory, config_settings, metadata_directory)
    _add_script(Path(wheel_directory) / name, _build_launcher())
    return name


def build_editable(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    name = maturin.build_editable(wheel_directory, config_settings, metadata_directory)
    _add_script(Path(wheel_directory) / name, _build_launcher())
    return name
