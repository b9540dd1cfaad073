#!/usr/bin/env python3
"""Accuracy and capacity of the emulator (issue 4's acceptance), run as root.

    sudo python3 bench/emu_accuracy.py [--bin target/release/airtrace-emu] [--quick] [--json OUT.json]
                                       [--workdir DIR]

Cases (each one `airtrace-emu` run, bulk TCP through the forwarder):

- rate10, rate100: 10 and 100 Mbit/s, 20 ms one way. Per-packet one-way delay error =
  time the packet left the forwarder (link_out.pcap) − the delivery time the link model
  gave it (link.jsonl `packet_delivered`, same order); delivered rate = forward bytes at
  link_out over the middle 80 % of the transfer (the queue is deep enough to stay busy).
- bernoulli: 1 % loss on the forward direction, counted over >= 100,000 packets
  (lost / (lost + delivered), from the forwarder's counters; cross-checked against the
  pcaps: link_in − link_out = lost + dropped).
- gilbert: Gilbert-Elliott (p_good_to_bad 0.01, p_bad_to_good 0.5, loss 1 in bad, 0 in
  good): mean burst length (runs of consecutive `packet_lost` among forward packets in
  id order) against 1 / p_bad_to_good = 2.
- capacity: unlimited rate, no delay, no loss, no captures: goodput, CPU time of the
  forwarder thread per packet, CPU time of the whole process (TCP endpoints included).

The bundles (up to 300 MB of pcaps per case) go to a temporary directory under
/dev/shm, so that the capture writer's disk I/O is not part of what is measured: on a VM
disk it held up the forwarder's device writes by up to 7 ms (`timing.slow_writes`);
`--workdir` puts them elsewhere.

Prints a Markdown table; numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def default_bin() -> str:
    target = os.environ.get("CARGO_TARGET_DIR", str(ROOT / "target"))
    return str(Path(target) / "release" / "airtrace-emu")


def read_pcap(path: Path) -> list[tuple[int, bytes]]:
    data = path.read_bytes()
    assert data[:4] == struct.pack("<I", 0xA1B23C4D), "nanosecond pcap"
    out, at = [], 24
    while at + 16 <= len(data):
        sec, nsec, caplen, _ = struct.unpack_from("<IIII", data, at)
        out.append((sec * 1_000_000_000 + nsec, data[at + 16 : at + 16 + caplen]))
        at += 16 + caplen
    return out


def scenario(rate: str, delay: str, queue: int, nbytes: str, *, loss: str = "", captures: str = '["link_in", "link_out"]',
             link_log: bool = True, tcp_log: bool = False, duration: str = "120 s") -> str:
    forward = f"\n[link.forward]\nloss = {loss}\n" if loss else ""
    return f"""name = "bench"
duration = "{duration}"
captures = {captures}
snaplen = 96
link_log = {"true" if link_log else "false"}
tcp_state_log = {"true" if tcp_log else "false"}

[link]
rate = "{rate}"
delay = "{delay}"
queue_packets = {queue}
{forward}
[[flow]]
app = "bulk"
bytes = "{nbytes}"
tcp = {{ cc = "cubic" }}
"""


def run(binary: str, text: str, workdir: Path, name: str, extra: list[str] | None = None) -> tuple[dict, Path, float]:
    scen = workdir / f"{name}.toml"
    scen.write_text(text)
    out = workdir / name
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    done = subprocess.run([binary, str(scen), "--out", str(out), *(extra or [])], capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{name}: airtrace-emu failed: {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = json.loads(done.stdout)
    summary["_wall_s"] = wall
    return summary, out, cpu


def link_records(out: Path) -> list[dict]:
    with open(out / "link.jsonl") as f:
        return [json.loads(line) for line in f]


def pct(xs: list[int], q: float) -> int:
    xs = sorted(xs)
    return xs[round((len(xs) - 1) * q)] if xs else 0


def delay_and_rate(out: Path, rate_bps: float) -> dict:
    meta = json.loads((out / "meta.json").read_text())
    epoch = meta["clock"]["epoch_ns"]
    link_out = read_pcap(out / "link_out.pcap")
    delivered = [r for r in link_records(out) if r["kind"] == "packet_delivered"]
    assert len(delivered) == len(link_out), (len(delivered), len(link_out))
    err = [t - epoch - r["t_ns"] for (t, _), r in zip(link_out, delivered)]
    fwd = [(t, r["bytes"]) for (t, _), r in zip(link_out, delivered) if r["dir"] == "down"]
    model = [(r["t_ns"], r["bytes"]) for r in delivered if r["dir"] == "down"]
    lo, hi = len(fwd) // 10, len(fwd) * 9 // 10
    nbytes = sum(b for _, b in fwd[lo + 1 : hi + 1])
    measured = nbytes * 8 / ((fwd[hi][0] - fwd[lo][0]) / 1e9)
    model_rate = nbytes * 8 / ((model[hi][0] - model[lo][0]) / 1e9)
    return {
        "packets": len(err),
        "err_p50_us": pct(err, 0.5) / 1000,
        "err_p99_us": pct(err, 0.99) / 1000,
        "err_max_us": max(err) / 1000,
        "err_min_us": min(err) / 1000,
        "rate_bps": measured,
        "rate_vs_configured": measured / rate_bps - 1,
        "model_rate_bps": model_rate,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=default_bin())
    ap.add_argument("--quick", action="store_true", help="smaller transfers (not the acceptance's 100,000 packets)")
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--only", help="comma-separated cases to run")
    ap.add_argument("--busy-poll", action="store_true", help="run the forwarder in busy-poll mode")
    ap.add_argument("--spin-us", type=int, help="the forwarder's spin margin before deadlines (default 100)")
    ap.add_argument("--workdir", default="/dev/shm" if Path("/dev/shm").is_dir() else None,
                    help="where the bundles are written (default /dev/shm, in RAM)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (network namespaces, TUN devices)")
    extra = ["--busy-poll"] if args.busy_poll else []
    if args.spin_us is not None:
        extra += ["--spin-us", str(args.spin_us)]
    only = set(args.only.split(",")) if args.only else None
    results: dict[str, dict] = {}
    big = "150 MB" if not args.quick else "30 MB"
    with tempfile.TemporaryDirectory(prefix="emu-bench-", dir=args.workdir) as tmp:
        work = Path(tmp)

        def want(name: str) -> bool:
            return only is None or name in only

        for name, rate, queue, nbytes in [("rate10", 10e6, 200, "12 MB"), ("rate100", 100e6, 1000, "100 MB")]:
            if not want(name):
                continue
            text = scenario(f"{rate / 1e6:g} Mbit/s", "20 ms", queue, nbytes if not args.quick else "5 MB")
            summary, out, cpu = run(args.bin, text, work, name, extra)
            r = delay_and_rate(out, rate)
            r["goodput_bps"] = summary["flows"][0]["goodput_bps"]
            r["timing"] = summary["timing"]
            results[name] = r
            print(f"{name}: {json.dumps(r)}", file=sys.stderr)

        if want("bernoulli"):
            text = scenario("100 Mbit/s", "1 ms", 1000, big, loss='{ model = "bernoulli", p = 0.01 }', captures='["link_in", "link_out"]', link_log=False)
            summary, out, cpu = run(args.bin, text, work, "bernoulli", extra)
            f = summary["link"]["forward"]
            measured = f["lost"] / max(1, f["lost"] + f["delivered"])
            from_a = lambda p: p[12:16] == bytes([198, 18, 0, 1])  # noqa: E731
            n_in = sum(1 for _, p in read_pcap(out / "link_in.pcap") if from_a(p))
            n_out = sum(1 for _, p in read_pcap(out / "link_out.pcap") if from_a(p))
            results["bernoulli"] = {
                "packets": f["lost"] + f["delivered"],
                "lost": f["lost"],
                "configured": 0.01,
                "measured": measured,
                "relative_error": measured / 0.01 - 1,
                "pcap_check": n_in - n_out == f["lost"] + f["queue_drops"] + f["link_drops"],
            }
            print(f"bernoulli: {json.dumps(results['bernoulli'])}", file=sys.stderr)

        if want("gilbert"):
            ge = '{ model = "gilbert_elliott", p_good_to_bad = 0.01, p_bad_to_good = 0.5, loss_in_good = 0.0, loss_in_bad = 1.0 }'
            text = scenario("100 Mbit/s", "1 ms", 1000, big, loss=ge, captures="[]")
            summary, out, cpu = run(args.bin, text, work, "gilbert", extra)
            fates = sorted(
                (r["packet"], r["kind"] == "packet_lost")
                for r in link_records(out)
                if r["dir"] == "down" and r["kind"] in ("packet_lost", "packet_delivered")
            )
            bursts, run_len = [], 0
            for _, lost in fates:
                if lost:
                    run_len += 1
                elif run_len:
                    bursts.append(run_len)
                    run_len = 0
            mean = sum(bursts) / max(1, len(bursts))
            results["gilbert"] = {
                "packets": len(fates),
                "bursts": len(bursts),
                "mean_burst": mean,
                "expected": 2.0,
                "relative_error": mean / 2.0 - 1,
                "loss_rate": sum(bursts) / max(1, len(fates)),
            }
            print(f"gilbert: {json.dumps(results['gilbert'])}", file=sys.stderr)

        if want("capacity"):
            text = scenario("unlimited", "0 ms", 1000, "3 GB", captures="[]", link_log=False, duration="12 s")
            summary, out, cpu = run(args.bin, text, work, "capacity", extra)
            t = summary["timing"]
            f = summary["flows"][0]
            fwd = summary["link"]["forward"]
            secs = (f["end_s"] or summary["end_s"]) - f["start_s"]
            results["capacity"] = {
                "goodput_bps": f["bytes_delivered"] * 8 / secs,
                "forward_packets": fwd["delivered"],
                "packets_per_s": (fwd["delivered"] + summary["link"]["reverse"]["delivered"]) / secs,
                "forwarder_cpu_s": t["forwarder_cpu_ns"] / 1e9,
                "forwarder_cpu_ns_per_packet": t["forwarder_cpu_ns"] / max(1, t["packets_read"]),
                "process_cpu_s": cpu,
                "process_cpu_ns_per_packet": cpu * 1e9 / max(1, t["packets_read"]),
                "busy_poll": t["busy_poll"],
            }
            print(f"capacity: {json.dumps(results['capacity'])}", file=sys.stderr)

    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    print("| case | figure | measured | target |")
    print("|---|---|---|---|")
    for name in ("rate10", "rate100"):
        if name in results:
            r = results[name]
            print(f"| {name} | delay error p50 / p99 / max | {r['err_p50_us']:.1f} / {r['err_p99_us']:.1f} / {r['err_max_us']:.0f} µs | < 100 µs / < 1000 µs |")
            print(f"| {name} | delivered rate (middle 80 %) | {r['rate_bps'] / 1e6:.3f} Mbit/s ({r['rate_vs_configured'] * 100:+.2f} %) | ±2 % |")
    if "bernoulli" in results:
        r = results["bernoulli"]
        print(f"| bernoulli 1 % | loss over {r['packets']:,} packets | {r['measured'] * 100:.3f} % ({r['relative_error'] * 100:+.1f} %) | ±10 % relative |")
    if "gilbert" in results:
        r = results["gilbert"]
        print(f"| gilbert-elliott | mean burst over {r['bursts']:,} bursts | {r['mean_burst']:.3f} ({r['relative_error'] * 100:+.1f} %) | 2.0 ±10 % |")
    if "capacity" in results:
        r = results["capacity"]
        print(f"| capacity | goodput, unlimited link | {r['goodput_bps'] / 1e9:.2f} Gbit/s ({r['packets_per_s']:,.0f} packets/s) | ≥ 1 Gbit/s |")
        print(f"| capacity | CPU per packet: forwarder / whole process | {r['forwarder_cpu_ns_per_packet'] / 1000:.2f} / {r['process_cpu_ns_per_packet'] / 1000:.2f} µs | |")


if __name__ == "__main__":
    main()
