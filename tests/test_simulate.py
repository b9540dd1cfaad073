"""The simulator as users run it: `airtrace simulate`, `airtrace.simulate`, and what
tshark makes of the captures it writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import airtrace
from airtrace.simulation import ScenarioError

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "airtrace.cli", *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def bursty_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Rais & Tripathi fixed-burst run, captured at all four vantage points."""
    text = (SCENARIOS / "rais_burst_fixed.toml").read_text()
    text = text.replace('captures = ["sender", "receiver"]', 'captures = ["sender", "receiver", "link_in", "link_out"]')
    scenario = tmp_path_factory.mktemp("scenario") / "rais_burst_fixed.toml"
    scenario.write_text(text)
    out = tmp_path_factory.mktemp("bundles") / "rais"
    done = cli("simulate", str(scenario), "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "ftp" in done.stdout
    return out


def test_bundle_has_every_file(bursty_bundle: Path) -> None:
    names = sorted(p.name for p in bursty_bundle.iterdir())
    assert names == [
        "link.jsonl",
        "link_in.pcap",
        "link_out.pcap",
        "meta.json",
        "receiver.pcap",
        "scenario.toml",
        "sender.pcap",
        "summary.json",
        "tcpstate.jsonl",
    ]
    meta = json.loads((bursty_bundle / "meta.json").read_text())
    assert meta["source"] == "simulation"
    assert [v["name"] for v in meta["vantage_points"]] == ["sender", "receiver", "link_in", "link_out"]
    state = [json.loads(line) for line in (bursty_bundle / "tcpstate.jsonl").read_text().splitlines()]
    assert {"cwnd", "ssthresh", "srtt_ns", "rttvar_ns", "rto_ns", "phase"} <= set(state[0])
    assert "loss" in {s["phase"] for s in state}, "the bursts cause timeouts"


def tshark_fields(
    tshark: str, pcap: Path, display_filter: str, *fields: str, options: tuple[str, ...] = ()
) -> list[list[str]]:
    cmd = [tshark, "-n", "-r", str(pcap), "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE"]
    cmd += ["-o", "udp.check_checksum:TRUE", *options, "-Y", display_filter, "-T", "fields"]
    for f in fields:
        cmd += ["-e", f]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    complaints = [line for line in done.stderr.splitlines() if "Running as user" not in line]
    assert complaints == [], done.stderr
    return [line.split("\t") for line in done.stdout.splitlines()]


@pytest.mark.parametrize("vantage", ["sender", "receiver", "link_in", "link_out"])
def test_tshark_reads_every_capture_cleanly(tshark: str, bursty_bundle: Path, vantage: str) -> None:
    pcap = bursty_bundle / f"{vantage}.pcap"
    bad = "_ws.malformed || _ws.expert.severity >= error || ip.checksum.status == 0 || tcp.checksum.status == 0"
    assert tshark_fields(tshark, pcap, bad, "frame.number") == []
    assert len(tshark_fields(tshark, pcap, "tcp", "frame.number")) > 1000


def test_tshark_counts_the_simulators_retransmissions(tshark: str, bursty_bundle: Path) -> None:
    """At the sender, tshark's count of retransmitted segments equals the simulator's.

    tshark labels some retransmissions out_of_order (its test is a time threshold, see
    docs/tshark-agreement.md); a sender never reorders its own segments, so at the
    sender every such label is a retransmission too."""
    summary = json.loads((bursty_bundle / "summary.json").read_text())
    retx = summary["flows"][0]["retransmissions"]
    assert retx > 0
    flagged = tshark_fields(
        tshark,
        bursty_bundle / "sender.pcap",
        "ip.src == 198.18.0.1 && (tcp.analysis.retransmission || tcp.analysis.fast_retransmission"
        " || tcp.analysis.spurious_retransmission || tcp.analysis.out_of_order)",
        "frame.number",
    )
    assert len(flagged) == retx


def test_airtrace_analyze_agrees_with_the_simulator(bursty_bundle: Path) -> None:
    summary = json.loads((bursty_bundle / "summary.json").read_text())
    packets = airtrace.read(bursty_bundle / "sender.pcap").packets()
    sent = packets[packets["ip_src"] == "198.18.0.1"]
    retransmitted = sent["retransmission"]
    assert int(retransmitted.sum()) == summary["flows"][0]["retransmissions"]


@pytest.mark.parametrize(("p", "seed"), [("0.02", 1), ("0.05", 1), ("0.1", 3)])
def test_the_analyzer_counts_the_simulators_timeouts_at_the_sender(tmp_path: Path, p: str, seed: int) -> None:
    """Reno without SACK under random loss: lost fast retransmissions and too few dupACKs
    end in timeouts, and the analyzer reading the sender's capture counts each expiry
    the simulated sender took (before issue 16's fix: 3 of 4, 13 of 14, 40 of 48)."""
    out = tmp_path / "run"
    done = cli(
        "simulate", str(SCENARIOS / "loss_bernoulli.toml"), "--out", str(out), "--no-progress",
        "--seed", str(seed), "--set", f"link.forward.loss.p={p}", "--set", 'duration="30 s"',
    )
    assert done.returncode == 0, done.stderr
    simulated = json.loads((out / "summary.json").read_text())["flows"][0]["timeouts"]
    sender = airtrace.read(out / "sender.pcap").connections.iloc[0]
    assert simulated > 0
    assert sender["a_to_b.timeouts"] == simulated


def test_python_api_and_seed_override(tmp_path: Path) -> None:
    a = airtrace.simulate(SCENARIOS / "loss_bernoulli.toml")
    b = airtrace.simulate(SCENARIOS / "loss_bernoulli.toml", seed=2)
    assert a["seed"] == 1 and b["seed"] == 2
    assert a["flows"][0]["finished"] and b["flows"][0]["finished"]
    assert a["link"]["forward"]["lost"] != b["link"]["forward"]["lost"]


def test_bad_scenario_is_one_line_with_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[link]\nrate = "1 Mbit/s"\nloss = { model = "bernoulli", p = 2 }\n[[flow]]\napp = "bulk"\nbytes = 1000\n')
    with pytest.raises(ScenarioError, match=r"bad\.toml:3:\d+: link\.loss: .*probability"):
        airtrace.simulate(bad)
    done = cli("simulate", str(bad))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "bad.toml:3:" in done.stderr
    assert "Traceback" not in done.stderr
    typo = tmp_path / "typo.toml"
    typo.write_text('[link]\nrate = "1 Mbit/s"\ndealy = "5 ms"\n[[flow]]\napp = "bulk"\nbytes = 1000\n')
    done = cli("simulate", str(typo))
    assert done.returncode == 1 and "typo.toml:3:1: unknown field `dealy`" in done.stderr


def test_set_overrides_any_value_and_the_bundle_keeps_the_result(tmp_path: Path) -> None:
    small = ["flow[1].bytes=200 kB", "captures=[]"]
    done = cli("simulate", str(SCENARIOS / "clean.toml"), "--out", str(tmp_path / "b"), "--json", "--no-progress",
               *(f"--set={s}" for s in [*small, "seed=7", "link.forward.loss.model=bernoulli", "link.forward.loss.p=0.02"]))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["seed"] == 7 and summary["flows"][0]["bytes_delivered"] == 200_000
    assert summary["link"]["forward"]["lost"] > 0
    kept = (tmp_path / "b" / "scenario.toml").read_text()
    assert kept.startswith('# clean.toml with --set "flow[1].bytes=200 kB" --set "captures=[]" --set "seed=7"')
    again = airtrace.simulate(tmp_path / "b" / "scenario.toml")
    assert again == summary, "the bundle's scenario.toml runs as the run ran"
    mapping = airtrace.simulate(SCENARIOS / "clean.toml", set={
        "flow[1].bytes": "200 kB", "captures": [], "seed": 7, "link.forward.loss": {"model": "bernoulli", "p": 0.02},
    })
    assert mapping == summary, "a mapping of Python values sets what the KEY=VALUE strings set"


@pytest.mark.parametrize(
    ("override", "rule"),
    [
        ("link.dealy=5 ms", "unknown field `dealy`, expected one of `rate`"),
        ("link.queue_packets=fifty", 'invalid type: string "fifty", expected u64'),
        ("flow[1].tcp.variant=vegas", 'flow[1].tcp.variant: unknown variant "vegas" (tahoe, reno, newreno or sack)'),
        ("flow[2].bytes=1", "`flow` has 1 entries, no [2]"),
    ],
)
def test_a_bad_override_is_one_line_naming_it_and_the_rule(override: str, rule: str) -> None:
    done = cli("simulate", str(SCENARIOS / "clean.toml"), "--set", override)
    assert done.returncode == 1
    assert done.stderr.startswith(f"airtrace: error: {SCENARIOS / 'clean.toml'}: --set {override}: {rule}")
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "scenario", ["nfs_read_bursts", "overbuffered_codel_ecn", "gsm_rlp", "wlan_arq", "wlan_collisions", "roam_l2", "roam_mobileip"]
)
def test_tshark_reads_other_link_kinds_cleanly(tshark: str, tmp_path: Path, scenario: str) -> None:
    """UDP fragments (RPC), ECN bits, RLP and 802.11-like ARQ links, beacons and a handoff,
    Mobile IP's advertisements, registrations and tunnel: still clean captures."""
    out = tmp_path / scenario
    done = cli("simulate", str(SCENARIOS / f"{scenario}.toml"), "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    bad = (
        "_ws.malformed || _ws.expert.severity >= error || ip.checksum.status == 0"
        " || tcp.checksum.status == 0 || udp.checksum.status == 0"
    )
    for pcap in sorted(out.glob("*.pcap")):
        assert tshark_fields(tshark, pcap, bad, "frame.number") == [], pcap.name
        assert len(tshark_fields(tshark, pcap, "ip", "frame.number")) > 100, pcap.name


def test_the_air_capture_shows_every_attempt_as_the_link_log_does(tshark: str, tmp_path: Path) -> None:
    """The sniffer's radiotap capture of a shared 802.11 channel, read by tshark with FCS
    checking on: exactly the collided attempts have a bad FCS, every retry has the Retry
    flag, and every frame received intact has its 802.11 ACK."""
    out = tmp_path / "air"
    done = cli("simulate", str(SCENARIOS / "wlan_collisions.toml"), "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    log = [json.loads(line) for line in (out / "link.jsonl").read_text().splitlines()]
    kinds = [e["kind"] for e in log]
    collided = sum(e["kind"] == "frame_lost" and e["reason"] == "collision" for e in log)
    assert collided == kinds.count("frame_lost") > 20, "a loss-free channel loses frames only to collisions"
    air = out / "air.pcap"
    check = ("-o", "wlan.check_checksum:TRUE")
    assert len(tshark_fields(tshark, air, "wlan.fcs.status == 0", "frame.number", options=check)) == collided
    assert len(tshark_fields(tshark, air, "radiotap.flags.badfcs == 1", "frame.number")) == collided
    assert len(tshark_fields(tshark, air, "wlan.fc.retry == 1", "frame.number")) == kinds.count("frame_retransmitted")
    acks = tshark_fields(tshark, air, "wlan.fc.type_subtype == 0x001d", "frame.number")
    assert len(acks) == kinds.count("frame_delivered")
    data = tshark_fields(tshark, air, "tcp", "frame.number")
    assert len(data) == kinds.count("frame_sent") + kinds.count("frame_retransmitted")


def test_tshark_decodes_the_dsr_headers_of_a_network(tshark: str, tmp_path: Path) -> None:
    """A chain routed by DSR, captured at both ends: tshark decodes every DSR options
    header (RFC 4728) and the TCP behind it, with valid checksums; the route requests,
    the replies and the source routes are there."""
    out = tmp_path / "dsr"
    done = cli(
        "simulate", str(SCENARIOS / "holland_vaidya_chain.toml"), "--out", str(out), "--no-progress",
        "--set", "network.routing=dsr", "--set", "network.arp=bsd", "--set", "duration=10 s",
        "--set", 'network.captures=["n0", "n4"]',
    )
    assert done.returncode == 0, done.stderr
    bad = "_ws.malformed || _ws.expert.severity >= error || ip.checksum.status == 0 || tcp.checksum.status == 0"
    for node in ["n0", "n4"]:
        pcap = out / f"{node}.pcap"
        assert tshark_fields(tshark, pcap, bad, "frame.number") == [], node
        protos = tshark_fields(tshark, pcap, "ip", "ip.proto")
        assert protos and all(p == ["48"] for p in protos), node
        assert len(tshark_fields(tshark, pcap, "dsr && tcp.len > 0", "frame.number")) > 100, node
    requests = tshark_fields(tshark, out / "n0.pcap", "dsr && ip.dst == 255.255.255.255", "frame.number")
    replies = tshark_fields(tshark, out / "n0.pcap", "dsr && !tcp && ip.src == 198.18.0.5", "frame.number")
    routes = [json.loads(line) for line in (out / "routes.jsonl").read_text().splitlines()]
    assert len(requests) >= sum(r["event"] == "request" and r["node"] == "n0" for r in routes) >= 1
    assert len(replies) >= 1


@pytest.fixture(scope="module")
def chain_air_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five seconds of Holland & Vaidya's 4-hop chain, with an air capture at every node."""
    out = tmp_path_factory.mktemp("bundles") / "chain"
    nodes = json.dumps([f"n{i}" for i in range(5)])
    done = cli("simulate", str(SCENARIOS / "holland_vaidya_chain.toml"), "--out", str(out), "--no-progress",
               "--set", "duration=5 s", "--set", f"network.air_captures={nodes}")
    assert done.returncode == 0, done.stderr
    return out


def test_network_air_captures_are_clean_and_show_every_retry_the_mac_counted(
    tshark: str, chain_air_bundle: Path
) -> None:
    """tshark reads each node's air capture without a malformed frame or an error, and
    counts as many frames with the Retry bit from the node as its MAC sent (data and RTS
    retries in summary.json); the chain's hidden terminals make sure there are some."""
    meta = json.loads((chain_air_bundle / "meta.json").read_text())
    mac = {n["name"]: n["interfaces"][0]["mac_address"] for n in meta["nodes"]}
    assert mac["n0"] == "02:00:00:00:00:01" and mac["n4"] == "02:00:00:00:00:05"
    air = [v for v in meta["vantage_points"] if v["linktype"] == 127]
    assert [(v["node"], v["file"]) for v in air] == [(f"n{i}", f"air-n{i}.pcap") for i in range(5)]
    summary = json.loads((chain_air_bundle / "summary.json").read_text())
    bad = "_ws.malformed || _ws.expert.severity >= error || ip.checksum.status == 0 || tcp.checksum.status == 0"
    total = 0
    for node in summary["network"]["nodes"]:
        pcap = chain_air_bundle / f"air-{node['name']}.pcap"
        assert tshark_fields(tshark, pcap, bad, "frame.number") == [], pcap.name
        retries = tshark_fields(tshark, pcap, f"wlan.fc.retry == 1 && wlan.ta == {mac[node['name']]}", "frame.number")
        sent = node["frames_sent"]
        assert len(retries) == sent["data_retries"] + sent["rts_retries"], pcap.name
        total += len(retries)
    assert total > 0


def test_network_air_capture_carries_the_ip_captures_packets(tshark: str, chain_air_bundle: Path) -> None:
    """The packets n0's radio sent or received intact are those its IP-layer capture
    holds, byte for byte (checksums included); frames lost at the radio have a bad FCS,
    as tshark finds when it checks them."""
    fields = ("ip.src", "ip.id", "ip.ttl", "ip.checksum", "tcp.seq", "tcp.ack", "tcp.checksum")
    ip_capture = {tuple(r) for r in tshark_fields(tshark, chain_air_bundle / "n0.pcap", "tcp", *fields)}
    air = chain_air_bundle / "air-n0.pcap"
    mine = "wlan.ta == 02:00:00:00:00:01 || wlan.ra == 02:00:00:00:00:01"
    on_air = {tuple(r) for r in tshark_fields(tshark, air, f"tcp && radiotap.flags.badfcs == 0 && ({mine})", *fields)}
    assert len(on_air) > 100 and on_air <= ip_capture
    check = ("-o", "wlan.check_checksum:TRUE")
    flagged = tshark_fields(tshark, air, "radiotap.flags.badfcs == 1", "frame.number")
    assert tshark_fields(tshark, air, "wlan.fcs.status == 0", "frame.number", options=check) == flagged != []


def test_network_air_captures_are_the_same_bytes_again(chain_air_bundle: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    scenario = chain_air_bundle / "scenario.toml"
    done = cli("simulate", str(scenario), "--out", str(again), "--no-progress")
    assert done.returncode == 0, done.stderr
    for i in range(5):
        name = f"air-n{i}.pcap"
        assert (again / name).read_bytes() == (chain_air_bundle / name).read_bytes(), name
