"""How fast `airtrace emulate` stops on SIGINT and SIGTERM, and that it leaves nothing
behind (docs/reliability.md, docs/emulator.md). Needs root.

usage: sudo .venv/bin/python bench/emu_stop_time.py [--runs 5]

For each moment and signal, each run starts `airtrace emulate` (the command in .venv) on
scenarios/emu_agreement.toml, waits for the moment, sends the signal and measures the
time from the signal to the process's exit. The moments: `setup`, as soon as the run's
namespaces appear; `connect`, 1.5 s later on the same link losing every packet host a
sends (the SYN and its first retransmission lost: the connect is pending); `transfer`,
1.5 s into the scenario's 5 MB transfer. Each run must exit 130 and leave no namespace,
no bundle and no partial directory. Prints the median and the worst time.
"""

from __future__ import annotations

import argparse
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AIRTRACE = ROOT / ".venv" / "bin" / "airtrace"
SCENARIO = ROOT / "scenarios" / "emu_agreement.toml"


def namespaces(pid: int) -> list[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in listed.splitlines() if line.startswith(f"airtrace-{pid}-")]


def one(scenario: Path, sig: signal.Signals, wait: float) -> float:
    """Seconds from `sig`, sent `wait` s after the namespaces appeared, to the exit."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [str(AIRTRACE), "emulate", str(scenario), "--out", str(Path(tmp) / "run")]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not namespaces(proc.pid):
            if proc.poll() is not None:
                sys.exit(f"the run ended before its namespaces appeared (exit {proc.returncode})")
            time.sleep(0.001)
        time.sleep(wait)
        sent = time.monotonic()
        proc.send_signal(sig)
        code = proc.wait()
        took = time.monotonic() - sent
        left = sorted(p.name for p in Path(tmp).iterdir()) + namespaces(proc.pid)
        if code != 130 or left:
            sys.exit(f"{sig.name}: exit {code} (want 130), left behind: {left}")
        return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lost = Path(tmp) / "lost.toml"
        text = SCENARIO.read_text()
        if "p = 0.01" not in text:
            sys.exit(f"{SCENARIO}: no `p = 0.01` loss to turn into 1.0")
        lost.write_text(text.replace("p = 0.01", "p = 1.0"))
        moments = {"setup": (SCENARIO, 0.0), "connect": (lost, 1.5), "transfer": (SCENARIO, 1.5)}
        print(f"`airtrace emulate` of {SCENARIO.name}; {a.runs} runs per moment and signal "
              f"(bench/emu_stop_time.py --runs {a.runs})\n")
        print("| moment | signal | exit code | median stop time (ms) | worst (ms) | left behind |")
        print("|---|---|---:|---:|---:|---|")
        for moment, (scenario, wait) in moments.items():
            for sig in (signal.SIGINT, signal.SIGTERM):
                times = [one(scenario, sig, wait) * 1e3 for _ in range(a.runs)]
                print(f"| {moment} | {sig.name} | 130 | {statistics.median(times):.0f} | {max(times):.0f} | nothing |")


if __name__ == "__main__":
    main()
