"""Captures nobody here had seen (issue 18): each class of trap met on public captures
outside the corpus, rebuilt with the pcap writer, and what airtrace must make of it."""

from __future__ import annotations

from pathlib import Path

import airtrace
from pcapgen import ACK, PSH, SYN, Capture, ethernet, ipv4_tcp

CLIENT, SERVER = "10.0.0.1", "10.0.0.2"


def test_a_stray_syn_ack_with_another_isn_does_not_rebase_the_connection(tmp_path: Path) -> None:
    """Class 3: a SYN/ACK with a new initial sequence number in the middle of a transfer
    (frame 6) used to rebase the server's sequence space: every later segment became a
    retransmission, with timeouts and a spurious timeout reported that never happened."""
    c = Capture()
    c.add(0.000, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 0, 0, SYN)))
    c.add(0.010, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 100, 1, SYN | ACK)))
    c.add(0.020, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101, ACK)))
    c.add(0.030, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101, ACK | PSH, payload=b"x" * 100)))
    c.add(0.040, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 101, 101, ACK | PSH, payload=b"r" * 1000)))
    c.add(0.045, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 99_999_999, 1, SYN | ACK)))
    for i in range(5):
        c.add(0.05 + i * 0.01, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 1101 + 1000 * i, 101, ACK, payload=b"r" * 1000)))
        c.add(0.055 + i * 0.01, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 101, 2101 + 1000 * i, ACK)))
    trace = airtrace.read(c.write(tmp_path / "stray-synack.pcap"))
    (row,) = trace.connections.to_dict("records")
    assert row["b_to_a.data_bytes"] == row["b_to_a.unique_bytes"] == 6000
    assert row["b_to_a.retransmitted_packets"] == 0 and row["b_to_a.timeouts"] == 0
    assert row["b_to_a.packets"] == 8, "the stray SYN/ACK is counted as a packet"
    assert trace.warnings == [
        f"{trace.path}: connection 0: 1 SYN/ACK(s) with another initial sequence number after data had flowed "
        "(first: frame 6), left out of the analysis: the data goes on in the first sequence space"
    ]
    packets = trace.packets(columns=["frame", "seq_rel", "retransmission", "out_of_order"]).set_index("frame")
    assert packets.loc[7:, "seq_rel"].tolist()[::2] == [1001, 2001, 3001, 4001, 5001]
    assert not packets["retransmission"].any() and not packets["out_of_order"].any()
    assert trace.findings.empty


def test_a_syn_ack_before_any_data_still_starts_the_space_again(tmp_path: Path) -> None:
    """A SYN/ACK with a new ISN before the server sent data (a retried handshake) is
    the one the data uses: the connection's space follows it, as before."""
    c = Capture()
    c.add(0.000, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 0, 0, SYN)))
    c.add(0.010, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 100, 1, SYN | ACK)))
    c.add(1.010, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 5000, 1, SYN | ACK)))
    c.add(1.020, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 5001, ACK)))
    c.add(1.030, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 5001, 1, ACK | PSH, payload=b"r" * 1000)))
    c.add(1.040, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 6001, ACK)))
    trace = airtrace.read(c.write(tmp_path / "retried-synack.pcap"))
    (row,) = trace.connections.to_dict("records")
    assert trace.warnings == []
    assert row["b_to_a.data_bytes"] == row["b_to_a.unique_bytes"] == 1000
    assert row["b_to_a.retransmitted_packets"] == 0
    assert trace.packets(columns=["seq_rel"])["seq_rel"].tolist()[-2] == 1
