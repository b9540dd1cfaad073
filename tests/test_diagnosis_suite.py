"""The diagnosis against simulated ground truth: each scenario injects one known cause,
and the finding kinds must match the kinds that cause implies (issue 6's acceptance:
precision and recall of at least 0.95 over the suite; clean links get no findings).

Run as a script for the confusion table of docs/diagnosis.md:
    .venv/bin/python tests/test_diagnosis_suite.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import airtrace

ROOT = Path(__file__).resolve().parent.parent

# name: (scenario text or repository scenario, kinds the injected cause implies, why)
SUITE: dict[str, tuple[str, set[str], str]] = {
    "bursts": (
        "@rais_burst_fixed",
        {"burst_loss", "timeout_backoff"},
        "100 ms of total loss every second; a BSD sender waits for its timer each time",
    ),
    "outage": (
        """
duration = "300 s"
[link]
rate = "4 Mbit/s"
delay = "20 ms"
queue_packets = 100
loss = { model = "bursts", length = "3 s", every = "15 s" }
[[flow]]
app = "bulk"
bytes = "40 MB"
[flow.tcp]
rcvbuf = "32 KiB"
sndbuf = "32 KiB"
""",
        {"link_outage", "timeout_backoff", "burst_loss"},
        "the link is down 3 s in every 15 s: retransmissions go unanswered, the RTO doubles",
    ),
    "overbuffered": (
        "@overbuffered",
        {"excessive_queueing"},
        "64 kbit/s with a 50-packet buffer and a 64 KiB window: seconds of standing queue",
    ),
    "header_compression_reset": (
        "@gsm_rlp",
        {"header_compression_failure", "timeout_backoff", "burst_loss", "excessive_queueing"},
        "RLP resets flush a few segments and VJ compression loses the rest of the window, on a 960 B/s link with a "
        "50-packet buffer (overbuffered: the RTT is seconds, so a fast retransmit would not have been quicker than "
        "the timer)",
    ),
    "receiver_window": (
        """
[link]
rate = "10 Mbit/s"
delay = "50 ms"
[[flow]]
app = "bulk"
bytes = "3 MB"
[flow.tcp]
rcvbuf = "16 KiB"
""",
        {"receiver_limited"},
        "a 16 KiB window on a 10 Mbit/s, 100 ms path (BDP 125 kB)",
    ),
    "delay_spike": (
        """
duration = "60 s"
[link]
delay = "20 ms"
queue_packets = 1000
[link.forward]
trace = "{spiky_trace}"
[link.reverse]
rate = "10 Mbit/s"
[[flow]]
app = "bulk"
bytes = "20 MB"
[flow.tcp]
rcvbuf = "96 KiB"
sndbuf = "96 KiB"
""",
        {"spurious_timeout", "timeout_backoff", "link_outage"},
        "the link holds every packet for 600 ms every 4 s (nothing lost, nothing delivered: an outage as TCP "
        "sees it) while the Linux-like RTO is about 200 ms",
    ),
    "wlan_collisions": (
        "@wlan_collisions",
        {"data_ack_collisions", "mac_retries", "excessive_queueing"},
        "an access point and a laptop contend for one loss-free 802.11b channel (TCP data one way, ACKs the other): "
        "every MAC retry follows a collision; the 64 KiB window stands 44 packets deep in the access point's queue",
    ),
    "wlan_corrupted": (
        """
duration = "120 s"
captures = ["sender", "air"]
[link]
rate = "11 Mbit/s"
delay = "1 us"
arq = { kind = "stop_and_wait", retry_limit = 7, medium = "shared" }
[link.forward]
loss = { model = "bernoulli", p = 0.1 }
[[flow]]
app = "bulk"
bytes = "2 MB"
[flow.tcp]
rcvbuf = "6 KiB"
""",
        {"bad_fcs", "data_ack_collisions", "mac_retries"},
        "the same shared channel corrupting 10 % of the data frames, with a window of four segments: bad FCS on "
        "the channel's frames, collisions told apart",
    ),
    "wlan_rate_thrash": (
        "@wlan_rate_thrash",
        {"rate_adaptation_thrash", "bad_fcs", "data_ack_collisions", "mac_retries", "excessive_queueing"},
        "100 m from the access point: 11 Mbit/s loses 80 % of its frames and Auto Rate Fallback keeps probing it "
        "(the frames it loses have a bad FCS); data and ACKs share the channel and the 64 KiB window queues",
    ),
    "delayed_ack": (
        """
[link]
rate = "10 Mbit/s"
delay = "20 ms"
[[flow]]
app = "bulk"
bytes = "200 kB"
[flow.tcp]
profile = "bsd"
mss = 1460
sndbuf = "1460"
""",
        {"delayed_ack_stall"},
        "a one-segment window against a receiver that delays its ACK 200 ms",
    ),
    "random_loss": (
        """
duration = "120 s"
[link]
rate = "20 Mbit/s"
delay = "20 ms"
queue_packets = 2000
[link.forward]
loss = { model = "bernoulli", p = 0.01 }
[[flow]]
app = "bulk"
bytes = "20 MB"
[flow.tcp]
variant = "sack"
rcvbuf = "1 MiB"
sndbuf = "1 MiB"
""",
        {"random_loss"},
        "1 % Bernoulli loss on data; SACK repairs it without pauses",
    ),
    "application_limited": (
        """
duration = "20 s"
[link]
rate = "10 Mbit/s"
delay = "10 ms"
[[flow]]
app = "onoff"
rate = "1 Mbit/s"
on = "1 s"
off = "2 s"
stop = "15 s"
""",
        {"sender_limited"},
        "an on-off source: 1 s at 1 Mbit/s, then 2 s of silence",
    ),
    "clean": (
        """
[link]
rate = "10 Mbit/s"
delay = "20 ms"
queue_packets = 100
[[flow]]
app = "bulk"
bytes = "10 MB"
[flow.tcp]
rcvbuf = "64 KiB"
sndbuf = "64 KiB"
""",
        set(),
        "no loss, a window a little over the bandwidth-delay product",
    ),
    "clean_fast": (
        """
[link]
rate = "100 Mbit/s"
delay = "5 ms"
queue_packets = 200
[[flow]]
app = "bulk"
bytes = "50 MB"
[flow.tcp]
variant = "newreno"
rcvbuf = "256 KiB"
sndbuf = "256 KiB"
""",
        set(),
        "no loss, 100 Mbit/s, a window a little over the bandwidth-delay product",
    ),
}


def _spiky_trace(dir: Path) -> Path:
    """A 10 Mbit/s delivery trace (one opportunity per 1.2 ms), 4 s long and looping,
    with no opportunity from 1.0 to 1.6 s of each loop."""
    lines = [str(t // 10) for t in range(0, 40_000, 12) if not 10_000 <= t < 16_000]  # t in 0.1 ms
    path = dir / "spiky.trace"
    path.write_text("\n".join(lines) + "\n")
    return path


def run_suite(workdir: Path) -> dict[str, tuple[set[str], set[str]]]:
    """scenario → (expected kinds, kinds found)."""
    trace = _spiky_trace(workdir)
    results = {}
    for name, (text, expected, _) in SUITE.items():
        if text.startswith("@"):
            scenario = ROOT / "scenarios" / f"{text[1:]}.toml"
        else:
            scenario = workdir / f"{name}.toml"
            scenario.write_text(text.replace("{spiky_trace}", str(trace)))
        bundle = workdir / name
        airtrace.simulate(scenario, bundle)
        found = {f.kind for f in airtrace.diagnose(bundle)}
        results[name] = (expected, found)
    return results


def scores(results: dict[str, tuple[set[str], set[str]]]) -> tuple[float, float, int, int, int]:
    tp = sum(len(e & f) for e, f in results.values())
    fp = sum(len(f - e) for e, f in results.values())
    fn = sum(len(e - f) for e, f in results.values())
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1), tp, fp, fn


def confusion_table(results: dict[str, tuple[set[str], set[str]]]) -> str:
    kinds = sorted(set().union(*(e | f for e, f in results.values())))
    lines = ["| kind | true positives | false positives | false negatives |", "|---|---:|---:|---:|"]
    for k in kinds:
        tp = sum(k in e and k in f for e, f in results.values())
        fp = [n for n, (e, f) in results.items() if k in f and k not in e]
        fn = [n for n, (e, f) in results.items() if k in e and k not in f]
        lines.append(f"| `{k}` | {tp} | {len(fp)}{' (' + ', '.join(fp) + ')' if fp else ''} | "
                     f"{len(fn)}{' (' + ', '.join(fn) + ')' if fn else ''} |")
    precision, recall, tp, fp, fn = scores(results)
    lines += ["", f"Over {len(results)} scenarios: {tp} true positives, {fp} false positives, {fn} false negatives; "
              f"precision **{precision:.3f}**, recall **{recall:.3f}**.", "",
              "| scenario | injected cause | expected kinds | found |", "|---|---|---|---|"]
    for name, (expected, found) in results.items():
        lines.append(f"| {name} | {SUITE[name][2]} | {', '.join(sorted(expected)) or '(none)'} | "
                     f"{', '.join(sorted(found)) or '(none)'} |")
    return "\n".join(lines)


def test_precision_and_recall_over_the_suite(tmp_path: Path) -> None:
    results = run_suite(tmp_path)
    precision, recall, *_ = scores(results)
    table = confusion_table(results)
    assert precision >= 0.95 and recall >= 0.95, table
    for clean in ("clean", "clean_fast"):
        assert results[clean][1] == set(), f"{clean}: {results[clean][1]}"


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        sys.stdout.write(confusion_table(run_suite(Path(d))) + "\n")


# The same check on real kernel TCP, in the emulator (root). Scenarios short in real time;
# random loss with a smaller transfer.
EMULATED = ("clean", "receiver_window", "application_limited", "random_loss")

# What a cause may also lead to on the kernel's TCP, by chance: with 1 % loss a
# retransmission is itself lost now and then, and only the timer repairs it (then
# duplicate ACKs after the timeout go unanswered by design). These kinds count neither
# for nor against the diagnosis, but only when the kernel's own RTO counter
# (summary.json `timeouts`, from TCP_INFO) says a timeout happened.
AFTER_A_KERNEL_TIMEOUT = {"random_loss": {"timeout_backoff", "fast_retransmit_suppressed"}}


def test_emulated_runs_give_the_same_findings(tmp_path: Path) -> None:
    import os

    import pytest

    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            raise RuntimeError("CI runs as root: the emulator needs it")
        pytest.skip("the emulator needs root")
    results = {}
    for name in EMULATED:
        text, expected, _ = SUITE[name]
        scenario = tmp_path / f"{name}.toml"
        scenario.write_text(text.replace('bytes = "20 MB"', 'bytes = "5 MB"'))
        airtrace.emulate(scenario, tmp_path / name)
        found = {f.kind for f in airtrace.diagnose(tmp_path / name)}
        summary = json.loads((tmp_path / name / "summary.json").read_text())
        if summary["flows"][0].get("timeouts"):
            found -= AFTER_A_KERNEL_TIMEOUT.get(name, set()) - expected
        results[name] = (expected, found)
    precision, recall, *_ = scores(results)
    assert precision >= 0.95 and recall >= 0.95, confusion_table(results)
