"""`airtrace.sweep`: parameter studies declared as data, run on every core or a Dask
cluster, kept as a Parquet dataset (docs/sweeps.md).

    >>> import airtrace
    >>> runs = airtrace.sweep("plans/mathis.toml", "results/mathis")    # doctest: +SKIP
    >>> runs.groupby("p")["goodput_bps"].mean()                           # doctest: +SKIP

Rust reads the plan (crates/airtrace-sim/src/plan.rs): it expands the parameters into
runs and loads the scenario with every combination of values before anything runs, so
a value the scenario refuses stops the sweep with the plan's file and line. This module
schedules the runs and keeps their rows (airtrace.dataset). A run is a pure function of
the scenario's text, its overrides and its seed, and its row's `id` is a hash of the
three: where it ran never changes its row, and a resumed sweep runs only the ids the
results lack.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airtrace import _core, workers
from airtrace.dataset import Results, ResultsError

if TYPE_CHECKING:
    import pandas as pd
    from distributed import Client


#: The machine this process runs on, for the rows it makes.
_HOST = socket.gethostname()


class PlanError(ValueError):
    """A plan that does not load: the message is `PLAN:LINE:COL: what is wrong`."""


@dataclass(frozen=True)
class Task:
    """One run, as a worker gets it."""

    id: str
    scenario: str
    seed: int
    set: tuple[str, ...]
    #: The parameters' column values.
    values: dict[str, Any]
    #: Where its bundle goes: None for no bundle (or a scratch one for the findings).
    bundle: str | None
    findings: bool


@dataclass(frozen=True)
class Plan:
    """A plan as Rust expanded it (`meta`, also written to the results' sweep.json)
    and its runs."""

    meta: dict[str, Any]
    tasks: list[Task]


def run_id(scenario: bytes, overrides: list[str], seed: int) -> str:
    """A run's identity: a hash of its scenario's text, its overrides and its seed."""
    digest = hashlib.sha256(scenario)
    digest.update(json.dumps([overrides, seed]).encode())
    return digest.hexdigest()[:32]


def load(plan: str | os.PathLike[str], out: str | os.PathLike[str]) -> Plan:
    """Reads, expands and checks `plan` (a file, or the name of a plan shipped with the
    package when no such file exists: `airtrace.data`); `out` is where its results (and
    bundles) go."""
    from airtrace.data import resolve

    try:
        raw: dict[str, Any] = json.loads(_core.plan_load(resolve(plan, "plans")))
    except ValueError as e:
        raise PlanError(str(e)) from None
    scenario = Path(raw["scenario"]).read_bytes()
    bundles = Path(out).resolve() / "bundles"
    tasks = []
    for run in raw["runs"]:
        rid = run_id(scenario, run["set"], run["seed"])
        tasks.append(
            Task(
                id=rid,
                scenario=raw["scenario"],
                seed=run["seed"],
                set=tuple(run["set"]),
                values=run["values"],
                bundle=str(bundles / rid) if raw["bundles"] else None,
                findings=raw["findings"],
            )
        )
    columns = [("id", "string")]
    columns += [(p["name"], p["column_type"]) for p in raw["parameters"]]
    columns += [("seed", "int64")] + [(m["name"], m["column_type"]) for m in raw["metrics"]]
    if raw["findings"]:
        columns += [("findings", "int64"), ("finding_kinds", "string"), ("findings_cost_s", "float64")]
    columns += [("error", "string"), ("airtrace_version", "string"), ("wall_s", "float64"), ("host", "string")]
    meta = {k: v for k, v in raw.items() if k != "runs"}
    meta["runs"] = len(tasks)
    meta["columns"] = [{"name": n, "type": t} for n, t in columns]
    return Plan(meta, tasks)


def _run(task: Task) -> dict[str, Any]:
    """One run's row. A run that fails is a row with its `error`, not an exception."""
    row: dict[str, Any] = {"id": task.id, **task.values, "seed": task.seed}
    started = time.perf_counter()
    scratch = None
    try:
        bundle = task.bundle
        if task.findings and bundle is None:
            scratch = tempfile.mkdtemp(prefix="airtrace-sweep-")
            bundle = os.path.join(scratch, "run")
        row.update(json.loads(_core.plan_run(task.scenario, list(task.set), task.seed, bundle)))
        if task.findings and bundle is not None:
            from airtrace.diagnosis import diagnose

            found = diagnose(bundle)
            row["findings"] = len(found)
            row["finding_kinds"] = ",".join(sorted({f.kind for f in found}))
            row["findings_cost_s"] = sum(f.cost_s for f in found)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # a Rust panic is a BaseException too
        row["error"] = f"{type(e).__name__}: {e}"
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    row["airtrace_version"] = _core.__version__
    row["wall_s"] = time.perf_counter() - started
    row["host"] = _HOST
    return row


def _run_chunk(tasks: list[Task]) -> list[dict[str, Any]]:
    """The rows of several runs: what a worker gets at a time, so that tiny runs do not
    pay a round trip each."""
    return [_run(t) for t in tasks]


def _chunks(tasks: list[Task], workers: int) -> list[list[Task]]:
    """`tasks` in chunks: about eight per worker, 1 to 64 runs each."""
    size = max(1, min(64, len(tasks) // (8 * max(1, workers))))
    return [tasks[i : i + size] for i in range(0, len(tasks), size)]


def _in_process(tasks: list[Task]) -> Iterator[list[dict[str, Any]]]:
    for task in tasks:
        yield [_run(task)]


def _process_pool(tasks: list[Task], jobs: int) -> Iterator[list[dict[str, Any]]]:
    """Runs on `jobs` worker processes, chunks in the order they finish."""
    from concurrent.futures import as_completed

    pool = workers.process_pool(jobs)
    try:
        futures = [pool.submit(_run_chunk, c) for c in _chunks(tasks, jobs)]
        for f in as_completed(futures):
            yield f.result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _dask(tasks: list[Task], client: Client) -> Iterator[list[dict[str, Any]]]:
    from distributed import as_completed

    workers = max(1, len(client.scheduler_info()["workers"]))
    futures = client.map(_run_chunk, _chunks(tasks, workers), pure=False)
    try:
        for f in as_completed(futures):
            yield f.result()
    finally:
        client.cancel(futures)


class _Progress:
    """One status line on stderr: done, failed, to go, rate and estimate."""

    def __init__(self, total: int, done: int, failed: int, enabled: bool) -> None:
        self.total, self.done, self.failed, self.enabled = total, done, failed, enabled
        self.started, self.new, self.shown = time.monotonic(), 0, 0.0

    def add(self, rows: list[dict[str, Any]]) -> None:
        self.done += len(rows)
        self.new += len(rows)
        self.failed += sum(1 for r in rows if r.get("error"))
        if self.enabled and time.monotonic() - self.shown > 0.2:
            self.show()

    def show(self) -> None:
        self.shown = time.monotonic()
        elapsed = self.shown - self.started
        rate = self.new / elapsed if elapsed > 0 else 0.0
        left = self.total - self.done
        eta = time.strftime("%H:%M:%S", time.gmtime(left / rate)) if rate > 0 else "--:--:--"
        sys.stderr.write(
            f"\rsweep: {self.done}/{self.total} done, {self.failed} failed, {left} to go, {rate:.1f} runs/s, ETA {eta} "
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            self.show()
            sys.stderr.write("\n")


def sweep(
    plan: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    cluster: str | None = None,
    resume: bool = False,
    progress: bool = False,
) -> pd.DataFrame:
    """Runs the sweep `plan` into the results directory `out` and returns its rows, in
    the plan's order (rows of runs no longer in the plan, if `out` holds any, after).

    Runs go to `jobs` worker processes (default: one per core; 1 runs them one after
    another in this process), to the Dask scheduler at `scheduler`, or to a Dask
    LocalCluster of `jobs` workers with `cluster="local"`. With `resume`, the runs `out`
    holds already are not run again; without it, `out` must hold none. The plan's
    reports are drawn into `out`. Raises PlanError for a plan that does not load,
    ResultsError for an `out` that cannot take the results.
    """
    return run(load(plan, out), out, jobs=jobs, scheduler=scheduler, cluster=cluster, resume=resume, progress=progress)


def run(
    plan: Plan,
    out: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    cluster: str | None = None,
    resume: bool = False,
    progress: bool = False,
    batch_s: float = 1.0,
) -> pd.DataFrame:
    """`sweep` for a loaded plan; rows are written every `batch_s` seconds, each batch
    a part of the dataset."""
    from airtrace import dataset
    from airtrace.sweep_report import draw

    workers.check_cluster(cluster)
    jobs = jobs or workers.cores()
    with Results(out, plan.meta, resume=resume) as results:
        done = results.done()
        todo = [t for t in plan.tasks if t.id not in done]
        bar = _Progress(len(plan.tasks), len(plan.tasks) - len(todo), sum(done.values()), progress)
        with _scheduled(todo, jobs, scheduler, cluster) as batches:
            pending: list[dict[str, Any]] = []
            written = time.monotonic()
            try:
                for rows in batches:
                    pending += rows
                    bar.add(rows)
                    if time.monotonic() - written >= batch_s:
                        results.append(pending)
                        pending, written = [], time.monotonic()
            finally:
                results.append(pending)
                bar.close()
    frame = dataset.read(out)
    order = {t.id: i for i, t in enumerate(plan.tasks)}
    frame = frame.sort_values("id", key=lambda ids: ids.map(lambda i: order.get(i, len(order))), kind="stable")
    frame = frame.reset_index(drop=True)
    draw(frame, plan.meta, Path(out))
    return frame


@contextmanager
def _scheduled(
    tasks: list[Task], jobs: int, scheduler: str | None, cluster: str | None
) -> Iterator[Iterator[list[dict[str, Any]]]]:
    """The rows of `tasks` as they finish, from where they run."""
    if scheduler is not None or cluster is not None:
        with workers.dask_client(scheduler, jobs) as client:
            yield _dask(tasks, client)
    elif jobs == 1 or len(tasks) <= 1:
        yield _in_process(tasks)
    else:
        yield _process_pool(tasks, jobs)


def plan_text(plan: Plan, name: str) -> str:
    """What `airtrace sweep PLAN --check` prints: the runs, each parameter's values (the
    first eight), the seeds and the result columns of the plan loaded from `name`."""
    meta = plan.meta
    lines = [f"{name}: {meta['runs']} runs of {meta['scenario']}"]
    for p in meta["parameters"]:
        values = list(dict.fromkeys(t.values[p["name"]] for t in plan.tasks))
        lines.append(f"  {p['name']} ({p['key']}): {len(values)} values, {', '.join(map(str, values[:8]))}{' ...' if len(values) > 8 else ''}")
    lines.append(f"  seeds: {len({t.seed for t in plan.tasks})}")
    lines.append("  columns: " + ", ".join(c["name"] for c in meta["columns"]))
    return "\n".join(lines) + "\n"
