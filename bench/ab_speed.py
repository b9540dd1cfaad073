#!/usr/bin/env python3
"""Two builds of a program side by side: A/B pairs of commands, run interleaved.

Each round runs every command once, in order, after one warm-up run of each (warm page
cache); the output goes to /dev/null. For each command: the median wall time (monotonic
clock around the process) and the median CPU time (user + system, from wait4); for each
pair (1st and 2nd command, 3rd and 4th, ...): the median of the same-round ratios B/A,
which a shared machine's changes of speed touch least. Used for the reader's overhead in
docs/benchmarks.md ("Reading a file that may shrink").

usage: python3 bench/ab_speed.py ROUNDS 'A1 ARGS' 'B1 ARGS' ['A2 ARGS' 'B2 ARGS' ...]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time


def run(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `cmd`."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit status {proc.returncode}")
    return time.monotonic() - start, usage.ru_utime + usage.ru_stime


def main() -> None:
    if len(sys.argv) < 4 or len(sys.argv) % 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    rounds = int(sys.argv[1])
    cmds = [arg.split() for arg in sys.argv[2:]]
    for cmd in cmds:
        run(cmd)
    load = os.getloadavg()[0]
    wall: list[list[float]] = [[] for _ in cmds]
    cpu: list[list[float]] = [[] for _ in cmds]
    for _ in range(rounds):
        for i, cmd in enumerate(cmds):
            w, c = run(cmd)
            wall[i].append(w)
            cpu[i].append(c)
    print(f"{rounds} rounds; 1-minute load average {load:.2f} before, {os.getloadavg()[0]:.2f} after ({os.cpu_count()} CPUs)")
    for i, cmd in enumerate(cmds):
        print(
            f"{' '.join(cmd)}: wall {statistics.median(wall[i]) * 1e3:.1f} ms "
            f"(min {min(wall[i]) * 1e3:.1f}), CPU {statistics.median(cpu[i]) * 1e3:.1f} ms"
        )
    for a in range(0, len(cmds), 2):
        b = a + 1
        rw = statistics.median(y / x for x, y in zip(wall[a], wall[b]))
        rc = statistics.median(y / x for x, y in zip(cpu[a], cpu[b]))
        print(f"B/A {' '.join(cmds[b])} / {cmds[a][0]}: wall {rw:.3f}, CPU {rc:.3f} (median of same-round ratios)")


if __name__ == "__main__":
    main()
