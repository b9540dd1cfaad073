"""The emulator as users run it: `airtrace emulate`, and the analyzer reading what it
wrote. Needs root (network namespaces, TUN devices), as CI has; skipped otherwise."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import airtrace

ROOT = Path(__file__).resolve().parent.parent

SMALL = """
name = "emu_small"
duration = "60 s"
captures = ["sender", "receiver", "link_in", "link_out"]

[link]
rate = "2 Mbit/s"
delay = "20 ms"
queue_packets = 50

[[flow]]
app = "bulk"
bytes = "500 KB"
tcp = { cc = "reno" }
"""

needs_root = pytest.mark.skipif(
    not (hasattr(os, "geteuid") and os.geteuid() == 0 and os.path.exists("/dev/net/tun")),
    reason="emulation needs root and /dev/net/tun",
)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "airtrace.cli", *args], capture_output=True, text=True)


@needs_root
def test_emulated_bundle_is_read_by_the_analyzer(tmp_path: Path) -> None:
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL)
    out = tmp_path / "bundle"
    done = cli("emulate", str(scenario), "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    flow = summary["flows"][0]
    assert flow["finished"] and flow["cc"] == "reno"
    assert 1.6e6 < flow["goodput_bps"] < 2.0e6
    meta = json.loads((out / "meta.json").read_text())
    assert meta["source"] == "emulation"
    packets = airtrace.read(out / "sender.pcap").packets()
    data = packets[packets["ip_src"] == "198.18.0.1"]
    assert len(data) > 300
    conns = airtrace.read(out / "receiver.pcap").connections
    assert len(conns) == 1
    assert not [p.name for p in tmp_path.iterdir() if ".partial-" in p.name]


@needs_root
def test_cleanup_command_runs() -> None:
    done = cli("emulate", "--cleanup")
    assert done.returncode == 0, done.stderr


def test_emulate_needs_scenario_and_out() -> None:
    done = cli("emulate")
    assert done.returncode in (1, 2)
    assert "Traceback" not in done.stderr


def test_nothing_after_the_double_dash_is_an_error(tmp_path: Path) -> None:
    done = cli("emulate", str(tmp_path / "s.toml"), "--out", str(tmp_path / "b"), "--")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "airtrace: error: emulate: nothing after `--` (give the command to run, or leave out `--`)"
    ]
    assert not (tmp_path / "b").exists()


def test_cleanup_takes_no_command() -> None:
    done = cli("emulate", "--cleanup", "--", "true")
    assert done.returncode == 2
    assert "takes no SCENARIO and no command" in done.stderr


@needs_root
def test_command_after_double_dash_runs_in_host_a(tmp_path: Path) -> None:
    # Its own options (-c) stay its own; it runs inside host a's namespace, whose only
    # address besides loopback is 198.18.0.1, and a connection attempt to a closed
    # port of host b crosses the link (SYN forward, RST back); its exit code is the
    # summary's.
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL)
    out = tmp_path / "bundle"
    script = (
        "import socket, subprocess, sys\n"
        "addrs = subprocess.run(['ip', '-4', '-o', 'addr'], capture_output=True, text=True).stdout\n"
        "try:\n"
        "    socket.create_connection(('198.18.1.1', 9), timeout=3)\n"
        "    refused = False\n"
        "except ConnectionRefusedError:\n"
        "    refused = True\n"
        "sys.exit(3 if 'inet 198.18.0.1/32' in addrs and refused else 1)\n"
    )
    done = cli("emulate", str(scenario), "--out", str(out), "--json", "--", sys.executable, "-c", script)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["command"]["argv"] == [sys.executable, "-c", script]
    assert summary["command"]["exit_code"] == 3, "host a's address, and the connection refused across the link"
    assert summary["link"]["forward"]["delivered"] >= 1 and summary["link"]["reverse"]["delivered"] >= 1
    assert summary["flows"] == []


@needs_root
@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 is not installed")
def test_user_command_and_server(tmp_path: Path) -> None:
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL)
    out = tmp_path / "bundle"
    done = cli(
        "emulate", str(scenario), "--out", str(out), "--json",
        "--server", "iperf3 -s -B 198.18.1.1 -1", "--", "iperf3", "-c", "198.18.1.1", "-t", "2", "-J",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout[done.stdout.rindex('\n{\n  "scenario"') :])
    assert summary["command"]["exit_code"] == 0
    assert summary["flows"] == []
    assert summary["link"]["forward"]["delivered_bytes"] > 300_000


@needs_root
def test_rpc_flow_over_udp(tmp_path: Path) -> None:
    scenario = tmp_path / "rpc.toml"
    scenario.write_text(
        """
name = "rpc_small"
duration = "30 s"
captures = ["sender"]

[link]
rate = "2 Mbit/s"
delay = "5 ms"

[[flow]]
name = "nfs-write"
app = "rpc_write"
bytes = "40 KiB"
rpc = { request_size = "8 KiB", service_time = "2 ms", outstanding = 2 }
"""
    )
    out = tmp_path / "bundle"
    done = cli("emulate", str(scenario), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].split()[:4] == ["nfs-write", "rpc_write", "udp", "40,960"]
    summary = json.loads((out / "summary.json").read_text())
    flow = summary["flows"][0]
    assert (flow["protocol"], flow["cc"], flow["finished"], flow["requests"]) == ("udp", None, True, 5)
    assert flow["retransmissions"] == flow["timeouts"] == 0
    # WRITE calls carry the data forward, each 8 KiB call in six fragments.
    assert summary["link"]["forward"]["delivered_bytes"] > 5 * 8192
    assert summary["link"]["forward"]["delivered"] >= 5 * 6
    meta = json.loads((out / "meta.json").read_text())
    assert meta["flows"][0]["b"] == "198.18.1.1:20049"


@needs_root
def test_two_emulations_in_threads_of_one_process_each_have_their_namespaces(tmp_path: Path) -> None:
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL.replace('bytes = "500 KB"', 'bytes = "200 KB"'))
    barrier, results, errors = threading.Barrier(2), {}, []

    def run(name: str) -> None:
        barrier.wait()
        try:
            results[name] = airtrace.emulate(scenario, tmp_path / name)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=run, args=(name,)) for name in ("one", "two")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for name in ("one", "two"):
        assert results[name]["flows"][0]["finished"]
        assert json.loads((tmp_path / name / "summary.json").read_text())["flows"][0]["bytes_delivered"] == 200_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one", "small.toml", "two"]
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"airtrace-{os.getpid()}-" not in left


@needs_root
def test_a_directory_that_is_not_a_bundle_is_refused_and_kept(tmp_path: Path) -> None:
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL)
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "meta.json").write_text("{}")
    (precious / "thesis.txt").write_text("thesis")
    done = cli("emulate", str(scenario), "--out", str(precious))
    assert done.returncode == 1
    assert "exists and is not a bundle airtrace wrote (it holds thesis.txt)" in done.stderr
    assert sorted(p.name for p in precious.iterdir()) == ["meta.json", "thesis.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious", "small.toml"]
