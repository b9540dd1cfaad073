#!/usr/bin/env python3
"""The simulator's TCP beside ns-3's away from the tuned point (issue 16), in one run.

The scenario is scenarios/ns3_lossy_link.toml (11 Mbit/s, 20 ms one way, a 50-packet
drop-tail queue, loss on data packets only, delayed ACKs every 2 segments, 128 KiB
buffers, initial window 10, minimum RTO 1 s, timestamps off) and its ns-3 twin
bench/ns3/tcp_cc_link.cc, whose congestion control and SACK are chosen per run. For
each cell of the grid

    newreno with SACK, newreno without SACK     at 1 %, 3 % and 5 % loss
    cubic, bbr (with SACK)                       at 1 %, 3 % and 5 % loss

both run SIM_S simulated seconds for each seed (airtrace's `seed`, ns-3's `--RngRun`),
and the table gives mean goodput (bytes delivered / simulated time, as ns-3 counts it),
mean retransmission timeouts per run, and the verdict against the issue's bars:
goodput within ±5 % and timeouts at most ns-3's + 25 % for newreno, goodput within
±10 % for cubic and bbr.

With --episode CC the two senders' windows are drawn instead, seed 1, 1 % loss, the
first 30 s, into docs/img/ns3-CC-cwnd.png, with each one's growth in congestion
avoidance (segments per second, summed over the increases while cwnd ≥ ssthresh and no
recovery is under way): the recovery episodes the table's differences come from.

usage: python3 bench/ns3_tcp_compare.py [--sim-seconds 1000] [--seeds 3] [--write-docs]
       python3 bench/ns3_tcp_compare.py --episode cubic
Needs libns3-dev and g++ (scripts/install-bench-packages.sh) and airtrace in .venv.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "bench" / "ns3" / "tcp_cc_link.cc"
NS3_BIN = ROOT / "bench" / "out" / "ns3_tcp_cc_link"
SCENARIO = ROOT / "scenarios" / "ns3_lossy_link.toml"
AIRTRACE = ROOT / ".venv" / "bin" / "airtrace"
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- BEGIN ns3_tcp_compare", "<!-- END ns3_tcp_compare -->"
NS3_LIBS = "-lns3-applications -lns3-internet -lns3-traffic-control -lns3-point-to-point -lns3-network -lns3-core"
LOSSES = (0.01, 0.03, 0.05)


@dataclass(frozen=True)
class Cell:
    """One row of the grid: a congestion control, SACK on or off, a loss rate."""

    cc: str  # ns-3's name: newreno, cubic, bbr
    sack: bool
    loss: float

    @property
    def goodput_bar(self) -> float:
        return 0.05 if self.cc == "newreno" else 0.10

    def airtrace_sets(self) -> list[str]:
        """The scenario's overrides for this cell."""
        cc = {"newreno": "reno"}.get(self.cc, self.cc)
        return [f"flow[1].tcp.cc={cc}", f"flow[1].tcp.variant={'sack' if self.sack else 'newreno'}",
                f"link.forward.loss.p={self.loss}"]


@dataclass(frozen=True)
class Run:
    """What one run gave: goodput over the simulated time, and its timeouts."""

    goodput_bps: float
    timeouts: int


def build_ns3() -> None:
    if NS3_BIN.exists() and NS3_BIN.stat().st_mtime > SOURCE.stat().st_mtime:
        return
    NS3_BIN.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["g++", "-O2", "-std=c++17", "-o", str(NS3_BIN), str(SOURCE), *NS3_LIBS.split()]
    print("building:", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)


def run_ns3(cell: Cell, seed: int, sim_s: int) -> Run:
    cmd = [str(NS3_BIN), f"--tcp={cell.cc}", f"--sack={int(cell.sack)}", f"--per={cell.loss}",
           f"--simTime={sim_s}", f"--RngRun={seed}"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    kv = dict(item.split("=", 1) for item in re.search(r"^RESULT (.*)$", out, re.M).group(1).split())
    return Run(int(kv["rxBytes"]) * 8 / sim_s, int(kv["rto"]))


def run_airtrace(cell: Cell, seed: int, sim_s: int) -> Run:
    sets = cell.airtrace_sets()
    cmd = [str(AIRTRACE), "simulate", str(SCENARIO), "--json", "--no-progress",
           "--set", f"seed={seed}", "--set", f"duration={sim_s} s"]
    for s in sets:
        cmd += ["--set", s]
    flow = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)["flows"][0]
    return Run(flow["bytes_delivered"] * 8 / sim_s, flow["timeouts"])


def ns3_window(trace: Path) -> tuple[list[float], list[float], float]:
    """(times, cwnd in segments, growth in congestion avoidance in segments/s) from the
    ns-3 program's --trace file (state 0 is ns-3's CA_OPEN)."""
    times, cwnd, grown, open_time = [], [], 0.0, 0.0
    state, since = 0, 0.0
    ssthresh = float("inf")
    for line in trace.read_text().splitlines():
        t_s, what, value = line.split()
        t, v = float(t_s), float(value)
        if what == "state":
            if state == 0:
                open_time += t - since
            state, since = int(v), t
        elif what == "ssthresh":
            ssthresh = v
        elif what == "cwnd":
            if state == 0 and cwnd and v > cwnd[-1] * 1460 and cwnd[-1] * 1460 >= ssthresh:
                grown += (v - cwnd[-1] * 1460) / 1460
            times.append(t)
            cwnd.append(v / 1460)
    return times, cwnd, grown / open_time


def airtrace_window(tcpstate: Path) -> tuple[list[float], list[float], float]:
    """The same from an airtrace bundle's tcpstate.jsonl (phase "open" is CA_OPEN)."""
    rows = [json.loads(line) for line in tcpstate.read_text().splitlines()]
    grown = open_time = 0.0
    for before, after in zip(rows, rows[1:]):
        if before["phase"] == "open" and after["phase"] == "open" and before["cwnd"] >= before["ssthresh"]:
            open_time += (after["t_ns"] - before["t_ns"]) / 1e9
            grown += max(after["cwnd"] - before["cwnd"], 0) / 1460
    return [r["t_ns"] / 1e9 for r in rows], [r["cwnd"] / 1460 for r in rows], grown / open_time


def episode(cc: str) -> None:
    """Draws both senders' cwnd, seed 1, 1 % loss, 30 s (docs/img/ns3-CC-cwnd.png)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cell = Cell(cc, True, 0.01)
    with tempfile.TemporaryDirectory(prefix="airtrace-ns3-episode-") as tmp:
        trace = Path(tmp) / "ns3.txt"
        subprocess.run([str(NS3_BIN), f"--tcp={cc}", "--per=0.01", "--simTime=30", "--RngRun=1",
                        f"--trace={trace}"], check=True, capture_output=True)
        ns3 = ns3_window(trace)
        cmd = [str(AIRTRACE), "simulate", str(SCENARIO), "--no-progress", "--out", f"{tmp}/bundle",
               "--set", "duration=30 s", "--set", "tcp_state_log=true"]
        for s in cell.airtrace_sets():
            cmd += ["--set", s]
        subprocess.run(cmd, check=True, capture_output=True)
        air = airtrace_window(Path(tmp) / "bundle" / "tcpstate.jsonl")
    fig, ax = plt.subplots(figsize=(9, 3.6), layout="constrained")
    for (t, w, growth), name, colour in ((ns3, "ns-3.37 Tcp" + cc.capitalize(), "C1"), (air, f"airtrace {cc}", "C0")):
        ax.step(t, w, where="post", color=colour, lw=0.9, label=f"{name}: +{growth:.2f} segments/s in CA")
        print(f"{name}: congestion avoidance grows {growth:.2f} segments/s", file=sys.stderr)
    shown = [w for t, w, _ in (ns3, air) for t, w in zip(t, w) if 10 <= t <= 20]
    ax.set(xlim=(10, 20), ylim=(0, max(shown) * 1.15), xlabel="time, s", ylabel="cwnd, segments",
           title=f"{cc}: 11 Mbit/s, 20 ms, 1 % loss on data, seed 1")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    out = ROOT / "docs" / "img" / f"ns3-{cc}-cwnd.png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out.relative_to(ROOT)}", file=sys.stderr)


def grid() -> list[Cell]:
    cells = [Cell("newreno", sack, loss) for sack in (True, False) for loss in LOSSES]
    return cells + [Cell(cc, True, loss) for cc in ("cubic", "bbr") for loss in LOSSES]


def row(cell: Cell, ns3: list[Run], air: list[Run]) -> str:
    mean = lambda runs, f: statistics.fmean(getattr(r, f) for r in runs)  # noqa: E731
    name = f"{cell.cc}{'' if cell.cc != 'newreno' else (' + SACK' if cell.sack else ', no SACK')}"
    ns3_g, ns3_t = mean(ns3, "goodput_bps"), mean(ns3, "timeouts")
    head = f"| {name} | {cell.loss:.0%} | {ns3_g / 1e6:.3f} | {ns3_t:.1f} |"
    air_g, air_t = mean(air, "goodput_bps"), mean(air, "timeouts")
    diff = air_g / ns3_g - 1
    ok = abs(diff) <= cell.goodput_bar
    if cell.cc == "newreno":
        ok = ok and air_t <= ns3_t * 1.25
    return head + f" {air_g / 1e6:.3f} | {air_t:.1f} | {diff:+.1%} | {'yes' if ok else '**no**'} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim-seconds", type=int, default=1000)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--episode", choices=["newreno", "cubic"], help="draw both windows instead of the grid")
    a = ap.parse_args()
    build_ns3()
    if a.episode:
        episode(a.episode)
        return
    started = time.monotonic()
    rows = []
    for cell in grid():
        seeds = range(1, a.seeds + 1)
        ns3 = [run_ns3(cell, s, a.sim_seconds) for s in seeds]
        air = [run_airtrace(cell, s, a.sim_seconds) for s in seeds]
        rows.append(row(cell, ns3, air))
        print(rows[-1], file=sys.stderr)
    lines = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} ({(time.monotonic() - started) / 60:.1f} min), "
        f"{a.sim_seconds} simulated s per run, seeds 1–{a.seeds} (means over the seeds), with",
        "",
        "```sh",
        f"python3 bench/ns3_tcp_compare.py --sim-seconds {a.sim_seconds} --seeds {a.seeds}{' --write-docs' if a.write_docs else ''}",
        "```",
        "",
        "| TCP | loss | ns-3 Mbit/s | ns-3 timeouts | airtrace Mbit/s | airtrace timeouts | airtrace/ns-3 − 1 | within the bar |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
        *rows,
    ]
    text = "\n".join(lines)
    print(text)
    if a.write_docs:
        doc = DOC.read_text()
        block = f"{BEGIN} (generated by bench/ns3_tcp_compare.py --write-docs; do not edit by hand) -->\n{text}\n{END}"
        if BEGIN in doc:
            doc = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: block, doc, flags=re.S)
        else:
            doc += f"\n## The simulator's TCP beside ns-3's (issue 16)\n\n{block}\n"
        DOC.write_text(doc)


if __name__ == "__main__":
    main()
