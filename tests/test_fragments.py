"""IPv4 fragmentation in a network of nodes (issue 14; RFC 791 §3.2), as tshark reads the
captures: the walk's UDP stream with the study's 2048-byte datagrams leaves the wired
host as two fragments each (MF set on the first, the second at offset 1480, one IP
identification), crosses the access point and radio as fragments, and tshark puts each
datagram together again at the mobile node, without a malformed packet."""

from __future__ import annotations

import collections
import subprocess
from pathlib import Path

import airtrace
from airtrace import bachmann

ROOT = Path(__file__).resolve().parent.parent
WALK = ROOT / "scenarios" / "bachmann_walk.toml"


def fields(tshark: str, pcap: Path, *names: str) -> list[list[str]]:
    args = [tshark, "-r", str(pcap), "-T", "fields", "-E", "separator=/t"]
    for name in names:
        args += ["-e", name]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def test_2048_byte_datagrams_cross_the_walk_as_fragments_tshark_reassembles(tshark: str, tmp_path: Path) -> None:
    bundle = tmp_path / "walk"
    summary = airtrace.simulate(
        WALK,
        bundle,
        set=["duration=3 s", "flow[1].datagram_size=2048", "network.captures=['host', 'mn']"],
    )
    rows = fields(tshark, bundle / "host.pcap", "ip.id", "ip.flags.mf", "ip.frag_offset", "ip.len", "_ws.malformed")
    by_id: dict[str, list[tuple[str, str, str]]] = collections.defaultdict(list)
    for ip_id, mf, offset, length, malformed in rows:
        assert not malformed
        by_id[ip_id].append((mf, offset, length))
    assert len(by_id) > 100
    # 2048 + 8 bytes of UDP: 1480 in the first fragment, 576 in the second, at offset
    # 185 (tshark gives it in 8-byte units: 1480 bytes).
    assert all(frags == [("1", "0", "1500"), ("0", "185", "596")] for frags in by_id.values()), by_id
    # At the mobile node tshark reassembles each datagram it got whole: UDP length 2056.
    received = fields(tshark, bundle / "mn.pcap", "ip.id", "udp.length", "_ws.malformed")
    assert received and not any(r[2] for r in received)
    whole = {ip_id for ip_id, length, _ in received if length == "2056"}
    assert whole and whole <= set(by_id)
    # The walk's throughput counts a datagram once all its fragments are in, as tshark does.
    got = bachmann.deliveries(bundle / "mn.pcap", 17)
    assert len(got) == len(whole) and {n for _, n in got} == {2048}
    assert summary["network"]["drops"].get("fragments_lost", 0) + len(whole) <= len(by_id)
