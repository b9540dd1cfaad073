#!/usr/bin/env python3
"""What a sweep costs besides its runs, and how fast `airtrace query` answers.

Tiny runs (scenarios/clean.toml moving 30 kB over 1 % loss, no files written: about a
millisecond of simulation each) are made four ways, interleaved round by round:

- `loop`: the runs one after another in one process, `_core.plan_run` and nothing else
  (the floor: no scheduling, no rows, no Parquet);
- `in process`: `airtrace.sweep(jobs=1)`, the same runs through the sweep (rows, parts);
- `pool`: `airtrace.sweep()` on the local process pool, one worker per core;
- `LocalCluster`: `airtrace.sweep(cluster="local")`, a Dask LocalCluster of as many
  workers, started and stopped inside the measured time.

The same four ways then make 200 heavier runs (a 100 Mbit/s transfer for 80 simulated
seconds, some 30 ms each), where the workers' parallelism should show.

Each is timed whole, start-up included, for the plan's runs and for a plan of 4 runs
(what a sweep costs before its first run: loading the plan, starting workers, writing
and reading the results); the runs per second beyond start-up are the difference's. A
first round, not measured, warms the imports; the table gives the medians. Then a 10,000-run sweep on the pool makes a dataset, and a
group-by over it is timed through `airtrace query` (a whole process) and
`airtrace.query` (in this process).

usage: python3 bench/sweep_overhead.py [--runs 400] [--rounds 3] [--write-docs]
Needs airtrace with its dev extras (Dask) in .venv.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import airtrace
from airtrace import _core

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- BEGIN sweep_overhead", "<!-- END sweep_overhead -->"
TINY = [
    "captures=[]",
    "link_log=false",
    "tcp_state_log=false",
    "duration=20 s",
    "flow[1].bytes=30 kB",
    'link.forward.loss={ model = "bernoulli", p = 0.01 }',
]
HEAVY = [*TINY, "duration=80 s", "link.rate=100 Mbit/s", "flow[1].bytes=10 GB", "flow[1].tcp.sndbuf=1 MiB"]
GROUP_BY = "SELECT variant, count(*) AS runs, avg(goodput_bps) AS goodput, max(timeouts) FROM runs GROUP BY variant"


#: The group-by timed over a capture's packets table.
PACKETS_GROUP_BY = (
    "SELECT conn, count(*) AS packets, sum(seglen) AS bytes, count(*) FILTER (WHERE retransmission) AS retransmissions "
    "FROM packets GROUP BY conn ORDER BY conn"
)


def plan(path: Path, runs: int, overrides: list[str] = TINY) -> Path:
    """A plan of `runs` runs with `overrides`: 4 TCP variants x `runs / 4` seeds."""
    path.write_text(
        f'scenario = "{ROOT / "scenarios" / "clean.toml"}"\nset = {json.dumps(overrides)}\n'
        f"seeds = {{ from = 1, to = {runs // 4} }}\n"
        '[[parameter]]\nkey = "flow[1].tcp.variant"\nname = "variant"\nvalues = ["tahoe", "reno", "newreno", "sack"]\n'
        '[keep]\nmetrics = ["goodput_bps", "timeouts", "retransmissions"]\n'
    )
    return path


def loop(plan_path: Path) -> float:
    """The plan's runs one after another, nothing but the simulations; wall s."""
    from airtrace.sweeps import load

    tasks = load(plan_path, plan_path.parent / "unused").tasks
    start = time.perf_counter()
    for t in tasks:
        _core.plan_run(t.scenario, list(t.set), t.seed)
    return time.perf_counter() - start


#: For each sweep timed, the time its runs took, added up, over its wall time: how many
#: ran at once on average (1 at most in one process).
CONCURRENCY: dict[Path, list[float]] = {}


def swept(plan_path: Path, out: Path, **how: object) -> float:
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    rows = airtrace.sweep(plan_path, out, **how)  # type: ignore[arg-type]
    wall = time.perf_counter() - start
    CONCURRENCY.setdefault(out, []).append(rows["wall_s"].sum() / wall)
    return wall


def packets_query(capture: Path, out: Path, rounds: int) -> list[str]:
    """Times `airtrace query` over the packets Parquet that `analyze --parquet` writes of
    `capture`: one line for the results list."""
    cli = [sys.executable, "-m", "airtrace.cli"]
    subprocess.run([*cli, "analyze", str(capture), "--parquet", str(out), "--no-progress"], check=True,
                   capture_output=True)
    rows = airtrace.query(out, "SELECT count(*) AS n FROM packets")["n"].iloc[0]
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run([*cli, "query", str(out), PACKETS_GROUP_BY], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return [
        f"- A group-by over the packets Parquet of {capture.name} ({rows:,} rows, written by `airtrace analyze "
        f"--parquet`; `{PACKETS_GROUP_BY}`): `airtrace query` {statistics.median(times):.2f} s as a whole process "
        f"(median of {rounds}, worst {max(times):.2f} s)."
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=400, help="tiny runs per way (default 400)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, each way once per round (default 3)")
    ap.add_argument("--query-runs", type=int, default=10_000, help="rows of the dataset queried (default 10,000)")
    ap.add_argument("--packets", type=Path, metavar="BIG.pcap",
                    help="also time a group-by over the packets Parquet of this capture (analyze --parquet)")
    ap.add_argument("--write-docs", action="store_true", help="write the results into docs/benchmarks.md")
    a = ap.parse_args()
    if a.packets and not a.packets.is_file():
        ap.error(f"{a.packets} does not exist (make it with: sudo bench/make_bulk_capture.sh {a.packets})")
    cores = len(os.sched_getaffinity(0))
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="airtrace-bench-") as tmp:
        work = Path(tmp)
        plans = {n: plan(work / f"tiny{n}.toml", n) for n in (4, a.runs)}
        ways = {
            "loop": lambda p: loop(p),
            "in process": lambda p: swept(p, work / "one", jobs=1),
            "pool": lambda p: swept(p, work / "pool"),
            "LocalCluster": lambda p: swept(p, work / "dask", cluster="local"),
        }
        times: dict[tuple[str, int], list[float]] = {(k, n): [] for k in ways for n in plans}
        for way in ways.values():  # imports and caches warm, not measured
            way(plans[4])
        for _ in range(a.rounds):
            for name, way in ways.items():
                for n, p in plans.items():
                    times[name, n].append(way(p))
        heavy = plan(work / "heavy.toml", 200, HEAVY)
        heavy_times: dict[str, list[float]] = {k: [] for k in ways}
        CONCURRENCY.clear()
        for _ in range(a.rounds):
            for name, way in ways.items():
                heavy_times[name].append(way(heavy))
        at_once = {out.name: statistics.median(v) for out, v in CONCURRENCY.items()}
        big = plan(work / "big.toml", a.query_runs)
        built = swept(big, work / "big")
        cli_times, api_times = [], []
        for _ in range(a.rounds):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "airtrace.cli", "query", str(work / "big"), GROUP_BY], check=True,
                           capture_output=True)
            cli_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            airtrace.query(work / "big", GROUP_BY)
            api_times.append(time.perf_counter() - start)
        packets_line = packets_query(a.packets, work / "packets", a.rounds) if a.packets else []
    load_after = os.getloadavg()[0]
    median = {k: statistics.median(v) for k, v in times.items()}
    per_run = {k: (median[k, a.runs] - median[k, 4]) / (a.runs - 4) for k in ways}
    lines = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {cores} CPUs; 1-minute load average "
        f"{load_before:.2f} before, {load_after:.2f} after. Median of {a.rounds} rounds, the ways interleaved.",
        "",
        f"| Way | Wall s, {a.runs} runs | Runs/s | Start-up s (4 runs) | Runs/s beyond start-up | Time per run / loop's |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name in ways:
        total, start = median[name, a.runs], median[name, 4]
        lines.append(
            f"| {name} | {total:.2f} | {a.runs / total:,.0f} | {start:.2f} | {1 / per_run[name]:,.0f} | "
            f"{per_run[name] / per_run['loop']:.1f}× |"
        )
    heavy_median = {k: statistics.median(v) for k, v in heavy_times.items()}
    lines += [
        "",
        "200 heavier runs (100 Mbit/s for 80 simulated s, 1 % loss):",
        "",
        "| Way | Wall s | Runs/s | Speed-up over loop | Runs at once (their times added up / wall) |",
        "|---|---:|---:|---:|---:|",
    ]
    outs = {"loop": None, "in process": "one", "pool": "pool", "LocalCluster": "dask"}
    for name, t in heavy_median.items():
        out = outs[name]
        concurrency = "1" if out is None else f"{at_once[out]:.2f}"
        lines.append(f"| {name} | {t:.2f} | {200 / t:,.1f} | {heavy_median['loop'] / t:.2f}× | {concurrency} |")
    lines += [
        "",
        f"- A {a.query_runs:,}-run sweep of the same tiny runs on the pool: {built:.1f} s ({a.query_runs / built:,.0f} runs/s).",
        f"- A group-by over its {a.query_runs:,} rows (`{GROUP_BY}`): `airtrace query` {statistics.median(cli_times):.2f} s "
        f"as a whole process (Python, DuckDB and the answer), `airtrace.query` {statistics.median(api_times) * 1000:.0f} ms "
        "in a running process.",
        *packets_line,
        "",
        "Command line:",
        "",
        "```sh",
        f"python3 bench/sweep_overhead.py --runs {a.runs} --rounds {a.rounds} --query-runs {a.query_runs}"
        f"{f' --packets {a.packets}' if a.packets else ''}{' --write-docs' if a.write_docs else ''}",
        "```",
    ]
    text = "\n".join(lines)
    print(text)
    if a.write_docs:
        doc = DOC.read_text()
        block = f"{BEGIN} (generated by bench/sweep_overhead.py --write-docs; do not edit by hand) -->\n{text}\n{END}"
        if BEGIN in doc:
            doc = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: block, doc, flags=re.S)
        else:
            doc += f"\n## Sweeps: scheduling overhead and queries\n\n{block}\n"
        DOC.write_text(doc)


if __name__ == "__main__":
    main()
