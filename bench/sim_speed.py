#!/usr/bin/env python3
"""The simulator beside ns-3: same scenario, side by side, in one run.

The scenario is ../shared/anchors/ns3/tcp_lossy_link.cc with a 1 % packet error rate
(NewReno bulk transfer, 11 Mbit/s, 20 ms, 50-packet queue, SACK, delayed ACKs every 2
segments, 128 KiB buffers, loss on data packets only) and its airtrace twin
scenarios/ns3_lossy_link.toml, both for SIM_S simulated seconds with captures off. Each
tool runs --runs times, alternating, whole process under /usr/bin/time; the table gives the
medians, the speed ratio (ns-3 wall time / airtrace wall time) and the goodputs. A second
airtrace run with captures at all four vantage points (and the link and TCP state logs)
gives the cost of writing them.

usage: python3 bench/sim_speed.py [--sim-seconds 10000] [--runs 3] [--write-docs]
Needs libns3-dev and g++ (scripts/install-bench-packages.sh) and airtrace in .venv.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANCHOR = ROOT.parent / "shared" / "anchors" / "ns3" / "tcp_lossy_link.cc"
OUT = ROOT / "bench" / "out"
NS3_BIN = OUT / "ns3_tcp_lossy_link"
SCENARIO = ROOT / "scenarios" / "ns3_lossy_link.toml"
AIRTRACE = ROOT / ".venv" / "bin" / "airtrace"
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- BEGIN sim_speed", "<!-- END sim_speed -->"
NS3_LIBS = "-lns3-applications -lns3-internet -lns3-traffic-control -lns3-point-to-point -lns3-network -lns3-core"


def build_ns3() -> None:
    """Builds the anchor program exactly as its build.sh does, into bench/out."""
    if NS3_BIN.exists() and NS3_BIN.stat().st_mtime > ANCHOR.stat().st_mtime:
        return
    OUT.mkdir(parents=True, exist_ok=True)
    cmd = ["g++", "-O2", "-std=c++17", "-o", str(NS3_BIN), str(ANCHOR), *NS3_LIBS.split()]
    print("building:", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)


def timed(cmd: list[str]) -> tuple[float, float, int, str]:
    """(wall s, cpu s, max RSS KiB, stdout) of one run under /usr/bin/time."""
    with tempfile.NamedTemporaryFile("r") as t:
        start = time.monotonic()
        p = subprocess.run(
            ["/usr/bin/time", "-o", t.name, "-f", "%U %S %M", *cmd], capture_output=True, text=True, cwd=ROOT
        )
        wall = time.monotonic() - start
        if p.returncode != 0:
            sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}")
        user, sys_, rss = t.read().split()[-3:]
    return wall, float(user) + float(sys_), int(rss), p.stdout


def scenario_copy(sim_s: int, captures: bool, tmp: Path) -> Path:
    """The ns3 scenario with another duration, and captures and logs on if asked."""
    text = SCENARIO.read_text()
    text = re.sub(r'^duration = ".*"', f'duration = "{sim_s} s"', text, flags=re.M)
    if captures:
        text = re.sub(r"^captures = \[\]", 'captures = ["sender", "receiver", "link_in", "link_out"]', text, flags=re.M)
        text = text.replace("link_log = false", "link_log = true").replace("tcp_state_log = false", "tcp_state_log = true")
    path = tmp / f"ns3_lossy_link_{sim_s}{'_captures' if captures else ''}.toml"
    path.write_text(text)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim-seconds", type=int, default=10000)
    ap.add_argument("--capture-seconds", type=int, default=1000, help="simulated seconds of the run with captures")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args()
    build_ns3()
    tmp = Path(tempfile.mkdtemp(prefix="airtrace-simbench-"))
    try:
        plain = scenario_copy(a.sim_seconds, False, tmp)
        with_caps = scenario_copy(a.capture_seconds, True, tmp)
        no_caps_short = scenario_copy(a.capture_seconds, False, tmp)
        ns3_cmd = [str(NS3_BIN), "--errorModel=rate", "--per=0.01", f"--simTime={a.sim_seconds}"]
        air_cmd = [str(AIRTRACE), "simulate", str(plain), "--json", "--no-progress"]
        load_before = os.getloadavg()[0]
        ns3, air = [], []
        for _ in range(a.runs):
            ns3.append(timed(ns3_cmd))
            air.append(timed(air_cmd))
        bundle = tmp / "bundle"
        caps = [timed([str(AIRTRACE), "simulate", str(with_caps), "--out", str(bundle), "--json", "--no-progress"]) for _ in range(a.runs)]
        short = [timed([str(AIRTRACE), "simulate", str(no_caps_short), "--json", "--no-progress"]) for _ in range(a.runs)]
        bundle_bytes = sum(f.stat().st_size for f in bundle.iterdir())
        load_after = os.getloadavg()[0]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    med = lambda runs, i: statistics.median(r[i] for r in runs)  # noqa: E731
    ns3_result = dict(kv.split("=", 1) for kv in re.search(r"^RESULT (.*)$", ns3[0][3], re.M).group(1).split())
    ns3_goodput = float(ns3_result["goodputMbps"]) * 1e6
    summary = json.loads(air[0][3])
    flow = summary["flows"][0]
    # Goodput over the whole simulated time, as ns-3 computes it (bytes received / simTime).
    air_goodput = flow["bytes_delivered"] * 8 / a.sim_seconds
    ratio = med(ns3, 0) / med(air, 0)
    goodput_diff = air_goodput / ns3_goodput - 1
    cap_cost = med(caps, 0) / med(short, 0)
    lines = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} CPUs ({platform.processor() or platform.machine()}); "
        f"1-minute load average {load_before:.2f} before, {load_after:.2f} after. Median of {a.runs} runs, alternating.",
        "",
        "| Tool | Simulated s | Wall s | CPU s | Peak RSS MiB | Goodput Mbit/s | Retransmissions | Timeouts |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        f"| ns-3.37 tcp_lossy_link (--per=0.01) | {a.sim_seconds:,} | {med(ns3, 0):.2f} | {med(ns3, 1):.2f} | {med(ns3, 2) / 1024:.0f} | "
        f"{ns3_goodput / 1e6:.3f} | {ns3_result.get('retx', '?')} | {ns3_result.get('rto', ns3_result.get('rtos', '?'))} |",
        f"| airtrace simulate ns3_lossy_link.toml | {a.sim_seconds:,} | {med(air, 0):.3f} | {med(air, 1):.3f} | {med(air, 2) / 1024:.0f} | "
        f"{air_goodput / 1e6:.3f} | {flow['retransmissions']} | {flow['timeouts']} |",
        "",
        f"- Speed: ns-3 wall time / airtrace wall time = **{ratio:.1f}×** (target ≥ 20×), whole processes.",
        f"- Goodput: airtrace {air_goodput / 1e6:.3f} Mbit/s vs ns-3 {ns3_goodput / 1e6:.3f} Mbit/s: **{goodput_diff:+.1%}** (target within ±10 %).",
        f"- Cost of writing captures ({a.capture_seconds:,} simulated s; pcaps at sender, receiver, link_in and link_out, "
        f"plus link.jsonl and tcpstate.jsonl, {bundle_bytes / 2**20:.0f} MiB in all): {med(caps, 0):.3f} s vs {med(short, 0):.3f} s "
        f"without, **{cap_cost:.1f}×**.",
        "",
        "Command lines:",
        "",
        "```sh",
        f"{' '.join(['bench/out/ns3_tcp_lossy_link', *ns3_cmd[1:]])}    # built from ../shared/anchors/ns3/tcp_lossy_link.cc as its build.sh does",
        f".venv/bin/airtrace simulate scenarios/ns3_lossy_link.toml --json --no-progress   # duration {a.sim_seconds} s",
        f"python3 bench/sim_speed.py --sim-seconds {a.sim_seconds} --runs {a.runs}{' --write-docs' if a.write_docs else ''}",
        "```",
    ]
    text = "\n".join(lines)
    print(text)
    if a.write_docs:
        doc = DOC.read_text()
        block = f"{BEGIN} (generated by bench/sim_speed.py --write-docs; do not edit by hand) -->\n{text}\n{END}"
        if BEGIN in doc:
            doc = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: block, doc, flags=re.S)
        else:
            doc += f"\n## Simulator speed beside ns-3\n\n{block}\n"
        DOC.write_text(doc)


if __name__ == "__main__":
    main()
