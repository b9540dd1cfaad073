"""`airtrace sweep` and `airtrace query`: a plan's runs give the same rows wherever they
run, survive `kill -9`, refuse bad values before running, and answer SQL."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest

import airtrace
from airtrace import dataset

ROOT = Path(__file__).resolve().parent.parent
CLEAN = ROOT / "scenarios" / "clean.toml"
CLI = [sys.executable, "-m", "airtrace.cli"]

#: Tiny runs: no files, a short transfer over scenarios/clean.toml's 10 Mbit/s link, 1 % loss.
TINY = [
    "captures=[]",
    "link_log=false",
    "tcp_state_log=false",
    "duration=20 s",
    "flow[1].bytes=30 kB",
    'link.forward.loss={ model = "bernoulli", p = 0.01 }',
]

#: 5 loss rates x 4 variants x 10 seeds = 200 runs.
PLAN = f"""
description = "loss against TCP variant, tiny transfers"
scenario = "{CLEAN}"
set = {json.dumps(TINY)}
seeds = {{ from = 1, to = 10 }}

[[parameter]]
key = "link.forward.loss.p"
name = "p"
from = 0.001
to = 0.1
count = 5
scale = "log"

[[parameter]]
key = "flow[1].tcp.variant"
name = "variant"
values = ["tahoe", "reno", "newreno", "sack"]

[keep]
metrics = ["goodput_bps", "timeouts", "retransmissions", "forward_lost"]

[[report]]
x = "p"
y = "goodput_bps"
group_by = "variant"
"""

#: Columns that say where and how fast a run ran, not what it gave.
WHERE = ["wall_s", "host"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def what(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows without the columns that depend on where they ran, in id order."""
    return frame.drop(columns=WHERE).sort_values("id").reset_index(drop=True)


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("plan") / "tiny.toml", PLAN)


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("single") / "results"


@pytest.fixture(scope="module")
def one_process(plan: Path, single: Path) -> pd.DataFrame:
    """The plan's rows, every run one after another in this process, into `single`."""
    return airtrace.sweep(plan, single, jobs=1)


def test_a_plan_expands_into_its_runs_and_rows(one_process: pd.DataFrame) -> None:
    assert len(one_process) == 200 and one_process["id"].is_unique
    assert list(one_process.columns) == [
        "id", "p", "variant", "seed", "goodput_bps", "timeouts", "retransmissions", "forward_lost",
        "error", "airtrace_version", "wall_s", "host",
    ]
    assert one_process["error"].isna().all()
    assert sorted(one_process["p"].unique()) == pytest.approx([0.001, 0.0031622776601, 0.01, 0.031622776601, 0.1])
    assert one_process.groupby(["p", "variant"]).size().eq(10).all()
    lossy = one_process.groupby("p")["forward_lost"].mean()
    assert lossy.is_monotonic_increasing and lossy.iloc[0] < lossy.iloc[-1]


def test_pool_dask_cluster_and_one_process_give_the_same_rows(
    plan: Path, one_process: pd.DataFrame, tmp_path: Path
) -> None:
    pool = airtrace.sweep(plan, tmp_path / "pool", jobs=2)
    cluster = airtrace.sweep(plan, tmp_path / "dask", jobs=2, cluster="local")
    pd.testing.assert_frame_equal(what(pool), what(one_process))
    pd.testing.assert_frame_equal(what(cluster), what(one_process))
    assert list(pool["id"]) == list(one_process["id"]), "rows come back in the plan's order"


def test_kill_9_then_resume_equals_an_uninterrupted_sweep(
    plan: Path, one_process: pd.DataFrame, tmp_path: Path
) -> None:
    out = tmp_path / "results"
    # Longer runs (240 s at 100 Mbit/s: some 30 ms each, 3 s for the sweep on two idle
    # cores), so that the kill, once the first part is written after a second, finds
    # the sweep under way.
    longer = [*TINY, "duration=240 s", "link.rate=100 Mbit/s", "flow[1].bytes=10 GB", "flow[1].tcp.sndbuf=1 MiB"]
    slow = write(tmp_path / "slow.toml", PLAN.replace(json.dumps(TINY), json.dumps(longer)))
    sweep = subprocess.Popen([*CLI, "sweep", str(slow), "--out", str(out), "--jobs", "2"], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not list((out / "runs").glob("part-*.parquet")) and time.monotonic() < deadline:
        time.sleep(0.02)
    workers = psutil.Process(sweep.pid).children(recursive=True)
    sweep.send_signal(signal.SIGKILL)
    sweep.wait()
    assert sweep.returncode == -signal.SIGKILL
    _, alive = psutil.wait_procs(workers, timeout=20)
    assert not alive, "the workers of a killed sweep end on their own"
    assert 0 < len(dataset.read(out)) < 200, "killed in the middle"
    # What a writer killed in the middle of a part leaves: the next sweep removes it.
    (out / "runs" / ".part-000009-1.parquet.123-abcd.tmp").write_bytes(b"PAR1 half a part")
    refused = cli("sweep", str(slow), "--out", str(out), "--no-progress")
    assert refused.returncode == 1 and "--resume" in refused.stderr
    done = cli("sweep", str(slow), "--out", str(out), "--resume", "--jobs", "2", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "200 runs (0 failed)" in done.stderr
    resumed = dataset.read(out)
    assert resumed["id"].is_unique and len(resumed) == 200
    assert sorted(p.name for p in (out / "runs").iterdir() if not p.name.startswith("part-")) == []
    uninterrupted = airtrace.sweep(slow, tmp_path / "whole", jobs=2)
    pd.testing.assert_frame_equal(what(resumed), what(uninterrupted))
    assert set(resumed["id"]) != set(one_process["id"]), "a run's id is its scenario, overrides and seed"


@pytest.mark.parametrize(
    ("parameter", "place", "rule"),
    [
        ('key = "link.dealy"\nvalues = ["1 ms", "2 ms"]', ":9:11: ", 'clean.toml: --set link.dealy="1 ms": unknown field `dealy`'),
        ('key = "link.queue_packets"\nvalues = [10, "fifty"]', ":9:15: ", 'invalid type: string "fifty", expected u64'),
        (
            'key = "link.forward.loss.p"\nvalues = [0.01,\n  1.5]',
            ":10:3: ",
            "--set link.forward.loss.p=1.5: link.forward.loss: bernoulli.p = 1.5 is not a probability",
        ),
        ('key = "link.delay"\nfrom = 10\nto = 1\nstep = 1\nunit = "ms"', ":7:1: ", "`from` must not be above `to`"),
        ('key = "flow.bytes"\nvalues = [1000]', ":9:11: ", "`flow` is an array: index it, as in flow[1].bytes"),
    ],
)
def test_a_bad_plan_is_refused_before_any_run_naming_file_line_and_rule(
    tmp_path: Path, parameter: str, place: str, rule: str
) -> None:
    bad = write(tmp_path / "bad.toml", f'scenario = "{CLEAN}"\nset = {json.dumps(TINY)}\n\n\n\n\n[[parameter]]\n{parameter}\n')
    done = cli("sweep", str(bad), "--out", str(tmp_path / "results"))
    assert done.returncode == 1
    assert done.stderr.startswith(f"airtrace: error: {bad}{place}") and rule in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "results").exists(), "nothing ran, nothing was written"
    with pytest.raises(airtrace.PlanError) as refused:
        airtrace.sweep(bad, tmp_path / "results")
    assert rule in str(refused.value)


def test_a_run_that_fails_inside_is_a_row_with_its_error(tmp_path: Path) -> None:
    plan = write(
        tmp_path / "sndbuf.toml",
        f'scenario = "{CLEAN}"\nset = {json.dumps(TINY)}\n'
        '[[parameter]]\nkey = "flow[1].tcp.sndbuf"\nname = "sndbuf"\nvalues = ["64 KiB", 100]\n',
    )
    rows = airtrace.sweep(plan, tmp_path / "results", jobs=1)
    assert list(rows["sndbuf"]) == ["64 KiB", "100"]
    ok, failed = rows.iloc[0], rows.iloc[1]
    assert pd.isna(ok["error"]) and ok["goodput_bps"] > 0
    assert failed["error"].startswith("ValueError: ") and "sndbuf (100) must hold at least one segment" in failed["error"]
    assert pd.isna(failed["goodput_bps"])


def test_query_answers_sql_over_the_runs_as_a_table_csv_and_json(single: Path, one_process: pd.DataFrame) -> None:
    results = str(single)
    assert Path(results, "report.html").is_file() and Path(results, "report-1.png").is_file()
    sql = "SELECT variant, count(*) AS runs, avg(goodput_bps) AS goodput FROM runs GROUP BY variant ORDER BY variant"
    expected = one_process.groupby("variant")["goodput_bps"].mean().sort_index()
    table = cli("query", results, sql)
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].split() == ["variant", "runs", "goodput"]
    as_json = json.loads(cli("query", results, sql, "--json").stdout)
    assert [r["variant"] for r in as_json] == list(expected.index)
    assert [r["goodput"] for r in as_json] == pytest.approx(list(expected))
    assert cli("query", results, sql, "--csv").stdout.splitlines()[0] == "variant,runs,goodput"
    bad = cli("query", results, "SELECT nosuch FROM runs")
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "nosuch" in bad.stderr


def test_query_reads_analyze_parquet_output_as_connections_and_packets(tmp_path: Path) -> None:
    capture = ROOT / "testdata" / "pcaps" / "sample-sender.pcapng"
    done = cli("analyze", str(capture), "--parquet", str(tmp_path), "--no-progress")
    assert done.returncode == 0, done.stderr
    trace = airtrace.read(capture)
    counts = airtrace.query(tmp_path, "SELECT (SELECT count(*) FROM packets) AS p, (SELECT count(*) FROM connections) AS c")
    assert (counts["p"][0], counts["c"][0]) == (len(trace.packets()), len(trace.connections))


@pytest.mark.parametrize(("name", "runs"), [("mathis.toml", 30), ("rais_bursts.toml", 70), ("holland_vaidya_manet.toml", 400)])
def test_the_bundled_plans_load_with_their_runs(name: str, runs: int, tmp_path: Path) -> None:
    from airtrace import sweeps

    assert len(sweeps.load(ROOT / "plans" / name, tmp_path / "results").tasks) == runs
