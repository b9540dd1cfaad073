"""Shared fixtures: where the corpus and the test captures are."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "real"


def corpus_files() -> list[Path]:
    """Every capture of the real-capture corpus (shared/corpus/real beside the repository)."""
    if not CORPUS.is_dir():
        if os.environ.get("CI") == "true":
            raise RuntimeError(f"the corpus is missing: {CORPUS}")
        return []
    return sorted(p for p in CORPUS.iterdir() if p.is_file() and p.name != "MANIFEST.md")


def native_airtrace() -> Path | None:
    """The native `airtrace` command (crates/airtrace-cli) next to the interpreter, where
    `pip install` puts it; None if it is not there (`maturin develop` does not install
    it). CI requires it."""
    exe = Path(sys.executable).parent / ("airtrace.exe" if os.name == "nt" else "airtrace")
    if exe.is_file() and exe.read_bytes()[:4] in (b"\x7fELF", b"MZ\x90\x00", b"\xcf\xfa\xed\xfe"):
        return exe
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"the native airtrace command is not installed at {exe} (`pip install .` puts it there)")
    return None


@pytest.fixture(scope="session")
def tshark() -> str:
    path = shutil.which("tshark")
    if path is None:
        if os.environ.get("CI") == "true":
            raise RuntimeError("tshark is missing: `make test` installs it (scripts/apt-packages.txt)")
        pytest.skip("tshark is not installed")
    return path


@pytest.fixture(scope="session")
def tcptrace() -> str:
    path = shutil.which("tcptrace")
    if path is None:
        if os.environ.get("CI") == "true":
            raise RuntimeError("tcptrace is missing: `make test` installs it (scripts/apt-packages.txt)")
        pytest.skip("tcptrace is not installed")
    return path


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without the corpus beside the repository (a clone on its own, outside CI), the
    tests that read it are skipped rather than failed; CI requires it (corpus_files)."""
    if CORPUS.is_dir() or os.environ.get("CI") == "true":
        return
    skip = pytest.mark.skip(reason=f"the corpus is not beside the repository: {CORPUS}")
    for item in items:
        function = getattr(item, "function", None)
        if function is not None and "CORPUS" in function.__code__.co_names:
            item.add_marker(skip)
