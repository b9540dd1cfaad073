#!/usr/bin/env python3
"""The network simulator beside ns-3: 802.11 chains and MANETs, side by side, in one run.

Cases (issues 12 and 13):

- chain: scenarios/holland_vaidya_chain.toml at 4 and 8 hops (ns-2's CMU 802.11, with
  static routes as wifi_chain.cc has them: `--set network.routing=static`; the scenario's
  own DSR adds route discovery and repair; one Reno flow with a window of 8) against ../shared/anchors/ns3/wifi_chain.cc
  (--prop=ns2, its default) as it is and with --rtsCts=true (airtrace's ns2 MAC sends
  RTS/CTS before every unicast frame, as ns-2 did), 100 simulated seconds.
- manet: scenarios/holland_vaidya_manet.toml (random waypoint in 1500 x 300 m, DSR, 300 s,
  10 m/s, pattern 1) with 30 and 50 nodes against ../shared/anchors/ns3/manet.cc with the
  same nodes, area (--height=300 also for 50 nodes), speed and simulated time. ns-3.37's
  DSR is defective (../shared/anchors/ns3/README.md: it drops TCP segments at the
  sender and grows to 1 GB), so manet.cc runs AODV (its default) and, as a second
  reference at the same routing protocol, DSR.
- random: bench/net_random30.toml, 30 nodes placed at random (not moving) in
  1500 x 300 m, static routes, four TCP flows; airtrace alone (ns-3 has no twin).
- grid (--grid): `airtrace reproduce holland-vaidya --seeds 1 --patterns 50`, whole
  command, once: the 10-hop chain table and 50 patterns x 4 speeds x {Reno, ELFN}.

Each pair runs --runs times, alternating (ns-3, airtrace, ns-3, ...), whole process under
/usr/bin/time; airtrace writes nothing (captures and link log off, summary printed with
--json), as ns-3 writes nothing. The tables give medians, the speed ratio (ns-3 wall /
airtrace wall, both medians of the same run of this script; a case's target, 20x for a
chain and 10x for a MANET, is checked on its lowest ratio), events per simulated second
(airtrace: summary.json `events`; ns-3: Simulator::GetEventCount() from its RESULT line)
and throughputs.

usage: python3 bench/net_speed.py [--runs 3] [--only chain,manet,random] [--grid] [--write-docs]
Needs libns3-dev and g++ (bash scripts/install-bench-packages.sh) and airtrace in .venv.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANCHORS = ROOT.parent / "shared" / "anchors" / "ns3"
OUT = ROOT / "bench" / "out"
AIRTRACE = ROOT / ".venv" / "bin" / "airtrace"
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- BEGIN net_speed", "<!-- END net_speed -->"
CHAIN = ROOT / "scenarios" / "holland_vaidya_chain.toml"
MANET = ROOT / "scenarios" / "holland_vaidya_manet.toml"
RANDOM = ROOT / "bench" / "net_random30.toml"

# The libraries of each program, exactly as ../shared/anchors/ns3/build.sh links them.
NS3_PROGRAMS = {
    "wifi_chain": "-lns3-wifi -lns3-mobility -lns3-propagation -lns3-applications -lns3-internet "
    "-lns3-network -lns3-core",
    "manet": "-lns3-aodv -lns3-dsr -lns3-wifi -lns3-mobility -lns3-propagation -lns3-applications "
    "-lns3-internet -lns3-network -lns3-core",
}

# airtrace writes nothing but its summary, as ns-3 writes nothing.
QUIET = ["--set", "network.captures=[]", "--set", "link_log=false", "--set", "tcp_state_log=false"]
# What a run costs before and after its events: the chain scenario for 1 simulated ms.
STARTUP = [str(AIRTRACE), "simulate", str(CHAIN), *QUIET, "--set", 'duration="1 ms"', "--json", "--no-progress"]


def ns3_bin(name: str) -> Path:
    return OUT / f"ns3_{name}"


def build_ns3() -> None:
    """Builds the anchor programs exactly as their build.sh does, into bench/out."""
    OUT.mkdir(parents=True, exist_ok=True)
    for name, libs in NS3_PROGRAMS.items():
        src, binary = ANCHORS / f"{name}.cc", ns3_bin(name)
        if binary.exists() and binary.stat().st_mtime > src.stat().st_mtime:
            continue
        cmd = ["g++", "-O2", "-std=c++17", "-o", str(binary), str(src), *libs.split()]
        print("building:", " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True)


@dataclass
class Run:
    wall: float
    cpu: float
    rss_kib: int
    stdout: str


def timed(cmd: list[str]) -> Run:
    """One whole-process run under /usr/bin/time: wall (monotonic clock around it), CPU, RSS."""
    with tempfile.NamedTemporaryFile("r") as t:
        start = time.monotonic()
        p = subprocess.run(
            ["/usr/bin/time", "-o", t.name, "-f", "%U %S %M", *cmd], capture_output=True, text=True, cwd=ROOT
        )
        wall = time.monotonic() - start
        if p.returncode != 0:
            sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}")
        user, sys_, rss = t.read().split()[-3:]
    return Run(wall, float(user) + float(sys_), int(rss), p.stdout)


def ns3_result(stdout: str) -> dict[str, str]:
    m = re.search(r"^RESULT (.*)$", stdout, re.M)
    if not m:
        sys.exit(f"no RESULT line in ns-3's output:\n{stdout[-2000:]}")
    return dict(kv.split("=", 1) for kv in m.group(1).split())


@dataclass
class Case:
    """One comparison: an airtrace command and the ns-3 commands beside it."""

    key: str
    label: str
    sim_s: float
    air_cmd: list[str]
    #: (label, command) of each ns-3 reference; empty for airtrace alone.
    ns3_cmds: list[tuple[str, list[str]]]
    ns3_runs: dict[str, list[Run]] = field(default_factory=dict)
    air_runs: list[Run] = field(default_factory=list)


def rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def air(scenario: Path, *sets: str) -> list[str]:
    cmd = [str(AIRTRACE), "simulate", str(scenario), *QUIET]
    for s in sets:
        cmd += ["--set", s]
    return cmd + ["--json", "--no-progress"]


def cases(only: set[str], nodes: list[int], speed: float, pattern: int, hops: list[int]) -> list[Case]:
    out = []
    if "chain" in only:
        for h in hops:
            out.append(
                Case(
                    f"chain{h}",
                    f"chain, {h} hops",
                    100,
                    air(CHAIN, f"network.chain.hops={h}", 'duration="100 s"', "network.routing=static"),
                    [
                        ("ns-3 wifi_chain", [str(ns3_bin("wifi_chain")), f"--hops={h}", "--simTime=100"]),
                        # airtrace's ns2 MAC sends RTS/CTS before every unicast frame, as ns-2 did.
                        ("ns-3 wifi_chain --rtsCts", [str(ns3_bin("wifi_chain")), f"--hops={h}", "--simTime=100", "--rtsCts=true"]),
                    ],
                )
            )
    if "manet" in only:
        for n in nodes:
            ns3 = [str(ns3_bin("manet")), f"--nodes={n}", "--width=1500", "--height=300", f"--speed={speed:g}"]
            ns3 += [f"--pattern={pattern}", "--simTime=300"]
            out.append(
                Case(
                    f"manet{n}",
                    f"MANET, {n} nodes, {speed:g} m/s",
                    300,
                    air(
                        MANET,
                        f"network.random.nodes={n}",
                        f"network.mobility.speed_mps={speed:g}",
                        f"network.mobility.pattern={pattern}",
                    ),
                    [("ns-3 manet (AODV)", ns3 + ["--routing=aodv"]), ("ns-3 manet (DSR)", ns3 + ["--routing=dsr"])],
                )
            )
    if "random" in only:
        out.append(Case("random30", "random 30 nodes, static, 4 flows", 100, air(RANDOM), []))
    return out


def air_figures(summary: dict, sim_s: float) -> tuple[int, float]:
    """(events, kbit/s of all flows together over the whole run) from summary.json."""
    events = int(summary["events"])
    kbps = sum(f["bytes_delivered"] for f in summary["flows"]) * 8 / sim_s / 1e3
    return events, kbps


def grid(runs: int) -> dict | None:
    """The whole `reproduce holland-vaidya` command, timed once per run."""
    cmd = [str(AIRTRACE), "reproduce", "holland-vaidya", "--seeds", "1", "--patterns", "50"]
    probe = subprocess.run([str(AIRTRACE), "reproduce", "--help"], capture_output=True, text=True, cwd=ROOT)
    if "--patterns" not in probe.stdout:
        return {"cmd": cmd, "missing": True}
    done = [timed(cmd) for _ in range(runs)]
    return {"cmd": cmd, "missing": False, "runs": done}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="chain,manet,random", help="comma-separated: chain, manet, random")
    ap.add_argument("--hops", default="4,8")
    ap.add_argument("--nodes", default="30,50")
    ap.add_argument("--speed", type=float, default=10)
    ap.add_argument("--pattern", type=int, default=1)
    ap.add_argument("--no-ns3-dsr", action="store_true", help="skip ns-3's (defective) DSR runs")
    ap.add_argument("--grid", action="store_true", help="also time `airtrace reproduce holland-vaidya --seeds 1 --patterns 50`")
    ap.add_argument("--grid-runs", type=int, default=1)
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args()
    only = set(a.only.split(","))
    build_ns3()
    todo = cases(
        only, [int(n) for n in a.nodes.split(",")], a.speed, a.pattern, [int(h) for h in a.hops.split(",")]
    )
    if a.no_ns3_dsr:
        for c in todo:
            c.ns3_cmds = [(lbl, cmd) for lbl, cmd in c.ns3_cmds if "DSR" not in lbl]
    startup: list[Run] = []
    load_before = os.getloadavg()[0]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for i in range(a.runs):
        for c in todo:
            for lbl, cmd in c.ns3_cmds:
                c.ns3_runs.setdefault(lbl, []).append(timed(cmd))
                print(f"run {i + 1}: {c.key} {lbl}: {c.ns3_runs[lbl][-1].wall:.2f} s", file=sys.stderr)
            c.air_runs.append(timed(c.air_cmd))
            print(f"run {i + 1}: {c.key} airtrace: {c.air_runs[-1].wall:.3f} s", file=sys.stderr)
        startup.append(timed(STARTUP))
    load_mid = os.getloadavg()[0]
    g = grid(a.grid_runs) if a.grid else None
    load_after = os.getloadavg()[0]

    med = lambda runs, attr: statistics.median(getattr(r, attr) for r in runs)  # noqa: E731
    rows, ratios = [], []
    for c in todo:
        summary = json.loads(c.air_runs[0].stdout)
        events, kbps = air_figures(summary, c.sim_s)
        # Deterministic: every run of a case gives the same events.
        assert all(json.loads(r.stdout)["events"] == events for r in c.air_runs), c.key
        aw = med(c.air_runs, "wall")
        rows.append(
            f"| {c.label} | airtrace | {c.sim_s:g} | {aw:.3f} | {med(c.air_runs, 'cpu'):.3f} | "
            f"{med(c.air_runs, 'rss_kib') / 1024:.0f} | {events:,} | {events / c.sim_s:,.0f} | {events / aw / 1e6:.2f} | "
            f"{c.sim_s / aw:,.0f} | {kbps:.1f} | |"
        )
        for lbl, runs in c.ns3_runs.items():
            res = ns3_result(runs[0].stdout)
            nev = int(res["events"])
            assert all(ns3_result(r.stdout)["events"] == res["events"] for r in runs), (c.key, lbl)
            nw = med(runs, "wall")
            ratio = nw / aw
            # Same-run ratios: the i-th ns-3 run over the i-th airtrace run, which ran right after it.
            paired = statistics.median(n.wall / x.wall for n, x in zip(runs, c.air_runs))
            ratios.append((c, lbl, ratio, paired))
            rows.append(
                f"| {c.label} | {lbl} | {c.sim_s:g} | {nw:.2f} | {med(runs, 'cpu'):.2f} | "
                f"{med(runs, 'rss_kib') / 1024:.0f} | {nev:,} | {nev / c.sim_s:,.0f} | {nev / nw / 1e6:.2f} | "
                f"{c.sim_s / nw:,.0f} | {float(res['kbps']):.1f} | **{ratio:.1f}×** ({paired:.1f}×) |"
            )
    target = {"chain": 20, "manet": 10}
    lines = [
        f"Measured {started} on {os.cpu_count()} CPUs ({platform.processor() or platform.machine()}); "
        f"1-minute load average {load_before:.2f} before, {load_mid:.2f} after the side-by-side runs"
        + (f", {load_after:.2f} after the grid" if g else "")
        + f". Median of {a.runs} runs, alternating (each case's ns-3 runs, then its airtrace run, case by case, "
        "round by round). The machine is shared: read the ratios, which come from the same run of the script, "
        "not the absolute times.",
        "",
        "| Case | Simulator | Simulated s | Wall s | CPU s | Peak RSS MiB | Events | Events per simulated s | "
        "M events per wall s | Simulated s per wall s | Throughput kbit/s | ns-3 wall / airtrace wall (median of same-round ratios) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
    ]
    for c in todo:
        mine = [(lbl, ratio, paired) for cc, lbl, ratio, paired in ratios if cc is c]
        if not mine:
            continue
        t = target[re.sub(r"\d+$", "", c.key)]
        # The acceptance figure: the lowest ratio of the case (ns-3's fastest reference).
        lowest = min(r for _, r, _ in mine)
        each = "; ".join(f"{lbl} / airtrace **{r:.1f}×** (same-round {p:.1f}×)" for lbl, r, p in mine)
        verdict = "met" if lowest >= t else "**not met**"
        lines.append(f"- {c.label}: {each}. Target ≥ {t}× (on the lowest, {lowest:.1f}×): {verdict}.")
    su = statistics.median(r.wall for r in startup)
    lines.append(
        f"- airtrace's fixed cost per process (the chain for 1 simulated ms: start-up, loading the scenario, "
        f"the summary; `airtrace simulate` runs in the native launcher, no Python): {su:.3f} s wall, included "
        "in every airtrace wall time above."
    )
    if g:
        if g["missing"]:
            lines.append(
                "- Grid: this build's `airtrace reproduce` has no `--patterns` (the 50 patterns × 4 speeds × "
                "{Reno, ELFN} MANET grid is not in it): not measured."
            )
        else:
            gw = [r.wall for r in g["runs"]]
            gm = statistics.median(gw)
            lines.append(
                f"- Grid (`{' '.join(['airtrace', *g['cmd'][1:]])}`, the whole command, {len(gw)} run(s)): "
                f"**{gm / 60:.1f} min** wall ({gm:.0f} s; CPU {statistics.median(r.cpu for r in g['runs']):.0f} s "
                f"over {os.cpu_count()} CPUs, peak RSS {max(r.rss_kib for r in g['runs']) / 1024:.0f} MiB); "
                f"target < 15 min: {'met' if gm < 900 else '**not met**'}."
            )
    lines += [
        "",
        "Command lines (airtrace's `--set`s also turn off its captures and logs: `--set network.captures=[] "
        "--set link_log=false --set tcp_state_log=false`):",
        "",
        "```sh",
    ]
    seen = set()
    for c in todo:
        for lbl, cmd in c.ns3_cmds:
            lines.append(f"bench/out/{Path(cmd[0]).name} {' '.join(cmd[1:])}")
        extra = [c.air_cmd[i + 1] for i, x in enumerate(c.air_cmd) if x == "--set" and c.air_cmd[i + 1] not in QUIET]
        line = f".venv/bin/airtrace simulate {rel(Path(c.air_cmd[2]))} " + " ".join(f"--set '{e}'" for e in extra)
        if line not in seen:
            seen.add(line)
            lines.append(line.rstrip() + " --json --no-progress")
    if g:
        lines.append(f".venv/bin/airtrace {' '.join(g['cmd'][1:])}")
    lines.append(
        # The interpreter this ran under: .venv/bin/python, or python3 from the PATH.
        f"{rel(Path(sys.executable)) if Path(sys.executable).is_relative_to(ROOT) else 'python3'} "
        f"bench/net_speed.py --runs {a.runs}"
        + (f" --only {a.only}" if a.only != "chain,manet,random" else "")
        + (" --grid" if a.grid else "")
        + (" --write-docs" if a.write_docs else "")
    )
    lines += [
        "```",
        "",
        "ns-3 programs built from ../shared/anchors/ns3/wifi_chain.cc and manet.cc exactly as its build.sh does "
        f"(`g++ -O2 -std=c++17`, ns-3.37 from Debian's libns3-dev); `{rel(AIRTRACE)}`: "
        + subprocess.run([str(AIRTRACE), "--version"], capture_output=True, text=True).stdout.strip()
        + f", commit {git_head()}.",
    ]
    text = "\n".join(lines)
    print(text)
    if a.write_docs:
        doc = DOC.read_text()
        block = f"{BEGIN} (generated by bench/net_speed.py --write-docs; do not edit by hand) -->\n{text}\n{END}"
        if BEGIN in doc:
            doc = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: block, doc, flags=re.S)
        else:
            doc += f"\n## Network simulator speed beside ns-3 (issues 12 and 13)\n\n{block}\n"
        DOC.write_text(doc)


def git_head() -> str:
    p = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    return p.stdout.strip() or "?"


if __name__ == "__main__":
    main()
