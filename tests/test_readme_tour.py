"""The README's quick tour runs exactly as printed (issue 17 item 4): its commands are
taken from the code blocks of the "A quick tour" section, in order, and run from an
empty directory outside the repository with the installed `airtrace` first on the PATH
(as `. .venv/bin/activate` puts it), each `python` block as a script of its own. A
command that fails, or a block the tour no longer has, fails the test: the README and
the tool cannot disagree.

Nothing is shortened. A few commands are not run, each for the reason in SKIPPED, and
every entry there must still name a command of the tour. The rest takes about 25 s on
two cores (the sweeps and `reproduce ludwig` most of it).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

#: Commands of the tour this test does not run (matched by their start), and why.
SKIPPED = {
    "airtrace reproduce all ": "every study over three seeds takes about eight minutes on two cores; "
    "tests/test_reproduce.py runs each study",
    'sudo "$(command -v airtrace)" emulate ': "needs root, network namespaces and TUN devices; tests/test_emulate.py "
    "runs the emulator where the machine allows it",
}

#: Commands that need an optional extra, and the module that says it is installed.
NEEDS = {"airtrace sweep mathis --out runs/mathis --cluster local": "distributed"}


def tour_blocks(readme: str) -> list[tuple[str, str]]:
    """(language, code) of each code block of the README's "A quick tour" section."""
    section = readme.split("\n## A quick tour\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```(\w+)\n(.*?)^```$", section, re.S | re.M)


def commands(block: str) -> list[str]:
    """The commands of a shell block, a line ending in a backslash joined to the next."""
    return [c.strip() for c in re.sub(r"\\\n", " ", block).splitlines() if c.strip()]


def skip_reason(command: str) -> str | None:
    for start, reason in SKIPPED.items():
        if command.startswith(start):
            return reason
    for start, module in NEEDS.items():
        if command.startswith(start) and importlib.util.find_spec(module) is None:
            return f"the optional extra providing {module} is not installed"
    return None


def test_the_tour_is_found_and_every_skip_names_one_of_its_commands() -> None:
    blocks = tour_blocks((ROOT / "README.md").read_text())
    assert [lang for lang, _ in blocks].count("python") >= 2 and len(blocks) >= 8
    shell = [c for lang, code in blocks if lang == "sh" for c in commands(code)]
    for start in [*SKIPPED, *NEEDS]:
        assert any(c.startswith(start) for c in shell), f"SKIPPED or NEEDS names no command of the tour: {start!r}"
    assert all(lang in ("sh", "python") for lang, _ in blocks)


def test_the_quick_tour_runs_as_printed(tmp_path: Path) -> None:
    here = tmp_path / "tour"
    here.mkdir()
    assert ROOT not in here.resolve().parents, "the tour must run outside the repository"
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("PYTHONPATH", None)
    ran, skipped = 0, []
    for i, (lang, code) in enumerate(tour_blocks((ROOT / "README.md").read_text())):
        if lang == "python":
            argv, what = [sys.executable, "-c", code], f"python block {i}"
            runs = [(argv, what)]
        else:
            runs = []
            for command in commands(code):
                reason = skip_reason(command)
                if reason:
                    skipped.append((command, reason))
                else:
                    runs.append((["bash", "-c", command], command))
        for argv, what in runs:
            done = subprocess.run(argv, cwd=here, env=env, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, f"{what}\nexit {done.returncode}\n{done.stderr[-3000:]}"
            assert "Traceback" not in done.stderr and "airtrace: error:" not in done.stderr, f"{what}\n{done.stderr}"
            ran += 1
    assert ran >= 30 and len(skipped) <= 4, (ran, skipped)
    # What the tour says it makes is there.
    for made in ["out/packets.parquet", "runs/rais/sender.pcap", "runs/cell/summary.json", "runs/gsm/summary.json",
                 "runs/rais_bursts/report.html", "runs/tables/connections.parquet", "run.png", "report.html",
                 "capture.html", "scenarios/rais_burst_fixed.toml"]:
        assert (here / made).is_file(), made
