"""How fast `airtrace simulate` stops on a signal, and that it leaves nothing behind
(docs/reliability.md).

usage: .venv/bin/python bench/stop_time.py [--runs 5] [--after 1.0]

Each run starts `airtrace simulate` (the native command on the PATH of .venv) on a long
MANET run writing a bundle, waits `--after` seconds, sends the signal and measures the
time from the signal to the process's exit; it checks the exit code (130, 143, 129) and
that no bundle and no partial directory is left. Prints the median and the worst time
per signal.
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
SCENARIO = ROOT / "scenarios" / "holland_vaidya_manet.toml"
CODES = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


def one(sig: signal.Signals, after: float) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        cmd = [str(AIRTRACE), "simulate", str(SCENARIO), "--out", str(out), "--no-progress",
               "--set", 'duration="100000 s"']
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(after)
        if proc.poll() is not None:
            sys.exit(f"the run ended before the signal (exit {proc.returncode})")
        sent = time.monotonic()
        proc.send_signal(sig)
        code = proc.wait()
        took = time.monotonic() - sent
        left = sorted(p.name for p in Path(tmp).iterdir())
        if code != CODES[sig] or left:
            sys.exit(f"{sig.name}: exit {code} (want {CODES[sig]}), left behind: {left}")
        return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--after", type=float, default=1.0, help="seconds into the run before the signal")
    a = ap.parse_args()
    print(f"`airtrace simulate` of {SCENARIO.name} for 100000 s into a bundle, signalled {a.after} s in; "
          f"{a.runs} runs per signal (bench/stop_time.py --runs {a.runs} --after {a.after})\n")
    print("| signal | exit code | median stop time (ms) | worst (ms) | left behind |")
    print("|---|---:|---:|---:|---|")
    for sig in CODES:
        times = [one(sig, a.after) * 1e3 for _ in range(a.runs)]
        print(f"| {sig.name} | {CODES[sig]} | {statistics.median(times):.1f} | {max(times):.1f} | nothing |")


if __name__ == "__main__":
    main()
