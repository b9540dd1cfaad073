"""The files shipped with the package (issue 17 item 4): `airtrace example` lists, locates
and copies them, `airtrace.data` / `airtrace.example` do the same from Python, and the
scenarios and plans run by name from any directory, a path that exists still winning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import airtrace
from airtrace import data
from airtrace.cli import main
from airtrace.simulation import ScenarioError
from airtrace.sweeps import PlanError
from conftest import ROOT, native_airtrace


def test_every_scenario_plan_and_sample_capture_of_the_repository_is_shipped() -> None:
    shipped = data.names()
    assert shipped["scenarios"] == sorted(p.stem for p in (ROOT / "scenarios").glob("*.toml"))
    assert shipped["plans"] == sorted(p.stem for p in (ROOT / "plans").glob("*.toml"))
    assert shipped["captures"] == sorted(p.name for p in (ROOT / "testdata" / "pcaps").glob("*.pcapng"))
    # One copy of each: the repository's scenarios/, plans/ and sample captures are links to the package's.
    for place in ("scenarios", "plans"):
        assert (ROOT / place).resolve() == data.root() / place
    for name in shipped["captures"]:
        assert (ROOT / "testdata" / "pcaps" / name).resolve() == data.root() / name


def test_the_shipped_data_stays_small() -> None:
    """The wheel carries these files: two sample captures of 0.7 MB, the scenarios with
    their traces, the plans and the report's viewer; 2 MB in all at most."""
    total = sum(p.stat().st_size for p in data.root().rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    assert total < 2_000_000, f"{total} bytes of package data"


@pytest.mark.parametrize("kind", ["scenarios", "plans"])
def test_each_copy_runs_as_the_original_does(kind: str, tmp_path: Path) -> None:
    """A copy takes what its TOML names (a scenario's trace, a plan's scenario) to the
    same relative places, so that it loads from the copy's directory alone."""
    for name in data.names(kind)[kind]:
        qualified = f"{kind}/{name}"
        copied = airtrace.example(qualified, to=tmp_path / name)
        assert copied == tmp_path / name / kind / f"{name}.toml" and copied.is_file()
        if kind == "plans":
            plan = airtrace.sweeps.load(copied, tmp_path / "results")
            assert plan.tasks and all(str(tmp_path / name) in t.scenario for t in plan.tasks)
        else:
            summary = airtrace.simulate(copied, set={"duration": "10 ms"})
            assert summary["scenario"]
    needs_trace = [p.relative_to(tmp_path) for p in tmp_path.rglob("traces/*")]
    if kind == "scenarios":
        assert sorted(map(str, needs_trace)) == [
            "bachmann_walk/scenarios/traces/bachmann_walk.movements",
            "delivery_trace/scenarios/traces/fading-3mbit.trace",
            "loss_trace/scenarios/traces/losses-2000.txt",
            "roam_l2/scenarios/traces/roam_l2.movements",
            "roam_mobileip/scenarios/traces/roam_mobileip.movements",
        ]


def test_a_scenario_runs_by_name_from_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    by_name = airtrace.simulate("clean", set={"duration": "200 ms"})
    by_path = airtrace.simulate(ROOT / "scenarios" / "clean.toml", set={"duration": "200 ms"})
    assert by_name == by_path and by_name["scenario"] == "clean"
    assert airtrace.simulate("clean.toml", set={"duration": "200 ms"}) == by_path


def test_a_file_that_exists_wins_over_the_shipped_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "scenarios" / "clean.toml").read_text().replace('name = "clean"', 'name = "mine"')
    Path("clean").write_text(text)
    Path("clean.toml").write_text(text)
    assert airtrace.simulate("clean", set={"duration": "10 ms"})["scenario"] == "mine"
    assert airtrace.simulate("clean.toml", set={"duration": "10 ms"})["scenario"] == "mine"


def test_an_unknown_name_is_refused_with_the_names_there_are(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError) as e:
        airtrace.simulate("kuang")
    assert str(e.value).startswith("kuang: no such file, nor a shipped scenario, did you mean 'kuang_cell'?")
    assert all(name in str(e.value) for name in data.names("scenarios")["scenarios"])
    with pytest.raises(PlanError, match=r"mathi: no such file, nor a shipped plan, did you mean 'mathis'\? \(plans: "):
        airtrace.sweep("mathi", tmp_path / "out")
    # A path with a directory in it is a path: the loader says what is wrong with it.
    with pytest.raises(ScenarioError, match="runs/missing.toml: cannot read the scenario"):
        airtrace.simulate("runs/missing.toml")


def test_a_name_shared_by_a_scenario_and_a_plan_must_say_which() -> None:
    with pytest.raises(data.UnknownExample, match="'scenarios/holland_vaidya_manet' or 'plans/holland_vaidya_manet'"):
        data.find("holland_vaidya_manet")
    assert data.find("holland_vaidya_manet", "plans").relative == Path("plans/holland_vaidya_manet.toml")
    assert data.find("scenarios/holland_vaidya_manet.toml").kind == "scenarios"


def test_example_lists_copies_and_locates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["example"]) == 0
    listing = capsys.readouterr().out
    for names in data.names().values():
        assert all(f"\n  {n} " in listing for n in names)
    assert "report.js" not in listing
    assert "  kuang_cell             Kuang, Xiao & Williamson, \"Diagnosing wireless TCP performance problems\"\n" in listing

    assert main(["example", "sample-sender.pcapng", "loss_trace"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "airtrace: wrote sample-sender.pcapng",
        "airtrace: wrote scenarios/loss_trace.toml",
        "airtrace: wrote scenarios/traces/losses-2000.txt",
    ]
    assert Path("sample-sender.pcapng").read_bytes() == (ROOT / "testdata" / "pcaps" / "sample-sender.pcapng").read_bytes()
    # Again: the same bytes are already there; another file in the way is left alone.
    assert main(["example", "sample-sender.pcapng"]) == 0
    assert capsys.readouterr().err == "airtrace: already there sample-sender.pcapng\n"
    Path("scenarios/traces/losses-2000.txt").write_text("1\n")
    assert main(["example", "loss_trace"]) == 1
    assert "scenarios/traces/losses-2000.txt: already there, and not the shipped loss_trace" in capsys.readouterr().err
    assert Path("scenarios/traces/losses-2000.txt").read_text() == "1\n"
    Path("f").touch()
    assert main(["example", "clean", "--to", "f"]) == 1
    assert capsys.readouterr().err == "airtrace: error: f/scenarios: Not a directory\n"

    assert main(["example", "--path", "mathis", "kuang"]) == 1
    out, err = capsys.readouterr()
    assert out == f"{data.root() / 'plans' / 'mathis.toml'}\n"
    assert "'kuang' is no shipped example, did you mean 'kuang_cell'?" in err


def test_the_native_command_hands_a_scenario_name_to_python(tmp_path: Path) -> None:
    exe = native_airtrace()
    if exe is None:
        pytest.skip("no native airtrace next to the interpreter")
    args = ["simulate", "clean", "--set", "duration=100 ms"]
    native = subprocess.run([str(exe), *args], capture_output=True, cwd=tmp_path, timeout=60)
    python = subprocess.run([sys.executable, "-m", "airtrace.cli", *args], capture_output=True, cwd=tmp_path, timeout=60)
    assert native.returncode == 0 and native.stdout.startswith(b"scenario clean, seed 1: ")
    assert (native.stdout, native.stderr) == (python.stdout, python.stderr)
