"""Captures nobody here had seen (issue 18): each class of trap met on public captures
outside the corpus, rebuilt with the pcap writer, and what airtrace must make of it."""

from __future__ import annotations

import struct
from pathlib import Path

import airtrace
import pytest
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


def _transfer(c: Capture, at: float, port: int = 1000) -> None:
    """A short clean transfer from `port`: handshake, three data segments and their ACKs."""
    steps = [
        (CLIENT, SERVER, port, 80, 0, 0, SYN, b""),
        (SERVER, CLIENT, 80, port, 100, 1, SYN | ACK, b""),
        (CLIENT, SERVER, port, 80, 1, 101, ACK, b""),
    ]
    for i in range(3):
        steps.append((CLIENT, SERVER, port, 80, 1 + 100 * i, 101, ACK | PSH, b"x" * 100))
        steps.append((SERVER, CLIENT, 80, port, 101, 101 + 100 * (i + 1), ACK, b""))
    for k, (src, dst, sp, dp, seq, ack, flags, payload) in enumerate(steps):
        c.add(at + 0.01 * k, ethernet(ipv4_tcp(src, dst, sp, dp, seq, ack, flags, payload=payload)))


#: 46 years, in seconds.
DECADES = 46 * 365 * 86400


def test_a_frame_dated_decades_away_poisons_no_time_rtt_or_span(tmp_path: Path) -> None:
    """Class 5: one frame dated 46 years later (frame 6, an ACK) gave an RTT maximum of
    1.45e9 s and a span of decades; one dated decades earlier as the first frame, negative
    times for everything after it."""
    c = Capture()
    _transfer(c, 1.0)
    c.frames[0] = (-1_600_000_000.0, c.frames[0][1])  # frame 1, the SYN: 1973
    t, frame = c.frames[5]
    c.frames[5] = (t + DECADES, frame)  # frame 6: the ACK of the first segment, in 2069
    trace = airtrace.read(c.write(tmp_path / "clock.pcap"))
    (row,) = trace.connections.to_dict("records")
    assert 0 <= row["start_s"] and row["duration_s"] < 1, row
    for d in ("a_to_b", "b_to_a"):
        assert row[f"{d}.rtt"]["max_s"] is None or row[f"{d}.rtt"]["max_s"] < 1
    packets = trace.packets(columns=["frame", "time_rel", "time_anomaly"]).set_index("frame")
    assert packets.loc[packets.time_anomaly].index.tolist() == [1, 6]
    assert (packets["time_rel"] >= 0).all() and packets["time_rel"].max() < 2
    assert trace.warnings == [
        f"{trace.path}: 2 frame(s) dated more than a day away from the frames around them (first: frame 1, at "
        "100000000 s since 1970), analysed at the time of the frames around them"
    ]
    assert all(f["start_s"] >= 0 for f in trace.findings.to_dict("records"))


def test_two_captures_years_apart_in_one_file_are_a_jump_not_an_anomaly(tmp_path: Path) -> None:
    """Two captures four years apart, one after the other in one file (as tcptrace's
    http example is): the frames after the jump go on from it, so it is taken, and the
    warning says the file holds captures of different times (issue 18 class D)."""
    c = Capture()
    _transfer(c, 0.0)
    _transfer(c, 4 * 365 * 86400.0, port=1001)
    trace = airtrace.read(c.write(tmp_path / "two.pcap"))
    [jump] = trace.warnings
    assert "clock jumps forward by more than a day 1 time(s)" in jump
    assert "the file holds captures taken at different times" in jump
    assert not trace.packets(columns=["time_anomaly"])["time_anomaly"].any()
    second = trace.connections.iloc[1]
    assert second["duration_s"] < 1 and second["handshake_rtt_s"] < 0.1


def test_tcp_in_an_access_points_gre_tunnel_is_analysed(tmp_path: Path) -> None:
    """Class 4: an Aruba access point's GRE tunnel to its controller carries the
    clients' 802.11 frames; its 2,400 TCP frames read as "0 TCP"."""
    import struct

    from pcapgen import _checksum

    def in_aruba_gre(ip_packet: bytes) -> bytes:
        wlan = b"\x08\x01\x00\x00" + b"\x02\0\0\0\0\xaa" + b"\x02\0\0\0\0\xbb" + b"\x02\0\0\0\0\xaa" + b"\x10\x00"
        inner = struct.pack("!HH", 0, 0x8210) + wlan + b"\xaa\xaa\x03\0\0\0\x08\x00" + ip_packet
        outer = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(inner), 0, 0, 64, 47, 0, bytes([192, 0, 2, 1]),
                            bytes([192, 0, 2, 2]))
        outer = outer[:10] + struct.pack("!H", _checksum(outer)) + outer[12:]
        return ethernet(outer + inner)

    c = Capture()
    for k, seg in enumerate([
        ipv4_tcp(CLIENT, SERVER, 1000, 80, 0, 0, SYN),
        ipv4_tcp(SERVER, CLIENT, 80, 1000, 100, 1, SYN | ACK),
        ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101, ACK),
        ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101, ACK | PSH, payload=b"x" * 500),
        ipv4_tcp(SERVER, CLIENT, 80, 1000, 101, 501, ACK),
    ]):
        c.add(0.01 * k, in_aruba_gre(seg))
    trace = airtrace.read(c.write(tmp_path / "aruba-gre.pcap"))
    assert trace.report["tcp_frames"] == 5
    (row,) = trace.connections.to_dict("records")
    assert (row["a"], row["b"]) == (f"{CLIENT}:1000", f"{SERVER}:80")
    assert row["a_to_b.data_bytes"] == 500 and row["handshake_rtt_s"] is not None


def _in_udp(dport: int, tunnel_header: bytes, inner: bytes) -> bytes:
    """`inner` behind `tunnel_header` in a UDP datagram to `dport`, over IPv4 and Ethernet."""
    from pcapgen import _checksum

    udp = struct.pack("!HHHH", 40000, dport, 8 + len(tunnel_header) + len(inner), 0) + tunnel_header + inner
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, bytes([192, 0, 2, 1]),
                     bytes([192, 0, 2, 2]))
    return ethernet(ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:] + udp)


_TUNNELS = {
    # RFC 7348 section 5: the I flag, the VNI; an Ethernet frame.
    "vxlan": lambda ip: _in_udp(4789, b"\x08\0\0\0\0\0\x2a\0", ethernet(ip)),
    # RFC 8926 section 3.4: one option word, protocol type 0x6558; an Ethernet frame.
    "geneve": lambda ip: _in_udp(6081, b"\x01\0\x65\x58\0\0\x2a\0" + b"\0\x01\x02\0", ethernet(ip)),
    # RFC 2661 section 3.1: a data message with its length; PPP (FF 03, protocol 0x0021).
    "l2tp": lambda ip: _in_udp(1701, struct.pack("!HHHH", 0x4002, 12 + len(ip), 7, 9) + b"\xff\x03\x00\x21", ip),
    # AYIYA: identity of 2^4 bytes, no signature, opcode forward, next header 4 (IPv4).
    "ayiya": lambda ip: _in_udp(5072, b"\x41\x00\x01\x04\0\0\0\0" + bytes(16), ip),
}


@pytest.mark.parametrize("tunnel", sorted(_TUNNELS))
def test_tcp_in_udp_tunnels_is_analysed(tmp_path: Path, tunnel: str) -> None:
    """Class 4: TCP inside VXLAN, Geneve, L2TPv2 and AYIYA read as "0 TCP", with no
    warning (ndpi_vxlan, tcpdump_geneve, ivre_nb6-http, zeek_ayiya3)."""
    c = Capture()
    for k, seg in enumerate(_handshake_and_data()):
        c.add(0.01 * k, _TUNNELS[tunnel](seg))
    trace = airtrace.read(c.write(tmp_path / f"{tunnel}.pcap"))
    assert trace.report["tcp_frames"] == 5
    (row,) = trace.connections.to_dict("records")
    assert (row["a"], row["b"]) == (f"{CLIENT}:1000", f"{SERVER}:80")
    assert row["a_to_b.data_bytes"] == 500
    assert trace.warnings == []


def test_frames_in_tunnels_airtrace_does_not_decode_are_counted(tmp_path: Path) -> None:
    """Class 4: a tunnel airtrace does not decode (here L2TPv3, whose sessions are set up
    by control messages the capture may not hold) must not leave a silent "0 TCP"."""
    c = Capture()
    for k, seg in enumerate(_handshake_and_data()):
        c.add(0.01 * k, _in_udp(1701, struct.pack("!HHI", 0x0003, 0, 0x1234) + b"\0" * 8, ethernet(seg)))
    trace = airtrace.read(c.write(tmp_path / "l2tpv3.pcap"))
    assert trace.report["tcp_frames"] == 0
    assert trace.warnings == [
        f"{trace.path}: 5 frame(s) carrying L2TPv3, which airtrace does not decode (first: frame 1)"
    ]


def _handshake_and_data() -> list[bytes]:
    return [
        ipv4_tcp(CLIENT, SERVER, 1000, 80, 0, 0, SYN),
        ipv4_tcp(SERVER, CLIENT, 80, 1000, 100, 1, SYN | ACK),
        ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101, ACK),
        ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101, ACK | PSH, payload=b"x" * 500),
        ipv4_tcp(SERVER, CLIENT, 80, 1000, 101, 501, ACK),
    ]


def test_numbers_that_cannot_be_true_are_not_reported(tmp_path: Path) -> None:
    """Class 6: a RST acknowledging 872 MB past a 30 kB transfer was reported as 872 MB
    "not captured"; a gap in a connection of 1-byte segments as "291 segment(s) (291
    bytes)". No window lets a sender run that far ahead, and a segment count needs a
    segment size."""
    RST = 0x04
    c = Capture()
    c.add(0.00, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 0, 0, SYN)))
    c.add(0.01, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 100, 1, SYN | ACK)))
    c.add(0.02, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101, ACK)))
    for i in range(20):
        c.add(0.03 + i * 0.01, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 101 + 1460 * i, 1, ACK, payload=b"r" * 1460)))
        c.add(0.035 + i * 0.01, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101 + 1460 * (i + 1), ACK)))
    c.add(0.5, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101 + 1460 * 20 + 872_000_000, ACK | RST)))
    trace = airtrace.read(c.write(tmp_path / "bogus-ack.pcap"))
    assert trace.findings.empty or "capture_drops" not in set(trace.findings["kind"])

    # An interactive session: 1-byte segments, and 291 bytes the capture missed.
    c = Capture()
    c.add(0.00, ethernet(ipv4_tcp(CLIENT, SERVER, 2000, 23, 0, 0, SYN)))
    c.add(0.01, ethernet(ipv4_tcp(SERVER, CLIENT, 23, 2000, 100, 1, SYN | ACK)))
    c.add(0.02, ethernet(ipv4_tcp(CLIENT, SERVER, 2000, 23, 1, 101, ACK)))
    for i in range(5):
        c.add(0.1 * (i + 1), ethernet(ipv4_tcp(CLIENT, SERVER, 2000, 23, 1 + i, 101, ACK | PSH, payload=b"k")))
        c.add(0.1 * (i + 1) + 0.02, ethernet(ipv4_tcp(SERVER, CLIENT, 23, 2000, 101, 2 + i, ACK)))
    c.add(1.0, ethernet(ipv4_tcp(SERVER, CLIENT, 23, 2000, 101, 6 + 291, ACK)))  # 291 bytes never seen
    findings = airtrace.read(c.write(tmp_path / "telnet.pcap")).findings
    (drops,) = [f for f in findings.to_dict("records") if f["kind"] == "capture_drops"]
    assert drops["explanation"].startswith("291 bytes (in 1 gap(s)) of this direction never appear")
    assert drops["details"]["bytes_not_captured"] == 291 and "segments_not_captured" not in drops["details"]


def test_a_fin_resent_with_backoff_is_reported(tmp_path: Path) -> None:
    """Class 8 (missed): the server's FIN went unacknowledged and was resent five times,
    0.31 to 4.96 s apart, keeping its IP ID and with no timestamps. It was taken for
    capture duplicates (class 2), then, as timeouts, went unreported."""
    FIN = 0x01
    c = Capture()
    c.add(0.00, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 0, 0, SYN, ip_id=1)))
    c.add(0.01, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 100, 1, SYN | ACK, ip_id=100)))
    c.add(0.02, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101, ACK, ip_id=2)))
    c.add(0.03, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101, ACK | PSH, payload=b"x" * 100, ip_id=3)))
    c.add(0.04, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 101, 101, ACK | PSH, payload=b"r" * 1000, ip_id=101)))
    c.add(0.05, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 101, 1101, ACK, ip_id=4)))
    t = 0.06
    for wait in (0, 0.31, 0.62, 1.24, 2.48, 4.96):
        t += wait
        c.add(t, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 1101, 101, ACK | FIN, ip_id=102)))
    trace = airtrace.read(c.write(tmp_path / "fin.pcap"))
    packets = trace.packets(columns=["retransmission", "capture_duplicate", "backoff"])
    assert packets["retransmission"].sum() == 5 and not packets["capture_duplicate"].any()
    assert packets["backoff"].dropna().tolist() == [1, 2, 3, 4, 5]
    (found,) = trace.findings.to_dict("records")
    assert (found["kind"], found["direction"]) == ("timeout_backoff", "b_to_a")
    assert found["explanation"].startswith(
        "The connection could not close: all its data was through, but its FIN went unacknowledged 5 time(s), "
        "after waits of 0.31 s, then 0.62 s, then 1.24 s, then 2.48 s, then 4.96 s (9.61 s in all)."
    )
    assert found["details"]["max_backoff"] == 5


def test_a_syn_refused_by_rst_and_retried_is_a_refusal_not_a_lost_syn(tmp_path: Path) -> None:
    """Class 8 (missed): SYNs each answered by a RST, retried after 1, 2 and 4 s, were
    reported as SYNs that "went unanswered" (timeout_backoff, the handshake lost)."""
    RST = 0x04
    c = Capture()
    t = 0.0
    for i, wait in enumerate((0.0, 1.0, 2.0, 4.0)):
        t += wait
        c.add(t, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 0, 0, SYN, ip_id=i + 1)))
        c.add(t + 0.01, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 0, 1, RST | ACK)))
    (found,) = airtrace.read(c.write(tmp_path / "refused.pcap")).findings.to_dict("records")
    assert (found["kind"], found["direction"]) == ("connection_refused", "a_to_b")
    assert found["explanation"].startswith(
        "The connection was refused: the peer answered its SYN with a RST, and the SYN was tried 3 more time(s), "
        "after waits of 1.00 s, then 2.00 s, then 4.00 s (7.00 s in all)"
    )
    assert found["details"]["attempts"] == 4


def _tail_then(c: Capture, resend_at: float, *, acked_to: int) -> None:
    """A 1 ms path: the client sends ten 1000-byte segments, the server acknowledges
    up to `acked_to`, then the client resends the tenth at `resend_at`."""
    c.add(0.000, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 0, 0, SYN)))
    c.add(0.001, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 100, 1, SYN | ACK)))
    c.add(0.002, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101, ACK)))
    for i in range(10):
        c.add(0.0100 + i * 0.0001, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1 + 1000 * i, 101, ACK, payload=b"x" * 1000)))
    for acked in [*range(2001, acked_to, 2000), acked_to]:
        c.add(0.0110 + acked * 1e-8, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 101, acked, ACK)))
    c.add(resend_at, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 9001, 101, ACK, payload=b"x" * 1000)))


def test_a_tail_loss_probe_is_not_a_timeout(tmp_path: Path) -> None:
    """Class 7: Linux's tail loss probe (RFC 8985 section 7.3) resent the last segment
    4.4 ms after it went, on a 1 ms path, and the receiver reported the copy as a
    duplicate (D-SACK). It was taken for a timeout: "0.00 s of silence" in
    timeout_backoff and a spurious_timeout, where Linux's RTO is never below 200 ms
    (bench/out/bulk-5M.pcap frame 3651). A timeout resends the first unacknowledged
    segment (RFC 6298 section 5.4), never one above it."""
    c = Capture()
    _tail_then(c, 0.0153, acked_to=8001)
    dsack = b"\x01\x01\x05\x0a" + struct.pack("!II", 9001, 10001)
    c.add(0.0163, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 101, 10001, ACK)))
    c.add(0.0164, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 101, 10001, ACK, options=dsack)))
    trace = airtrace.read(c.write(tmp_path / "tlp.pcap"))
    packets = trace.packets(columns=["frame", "retrans_kind", "backoff"]).set_index("frame")
    assert packets.loc[18, "retrans_kind"] == "tail_loss_probe"
    assert packets["backoff"].isna()[18]
    (row,) = trace.connections.to_dict("records")
    assert (row["a_to_b.tail_loss_probes"], row["a_to_b.timeouts"], row["a_to_b.retransmitted_packets"]) == (1, 0, 1)
    assert trace.findings.empty, trace.findings[["kind", "explanation"]].to_string()


def test_the_only_segment_resent_after_a_wait_is_still_a_timeout(tmp_path: Path) -> None:
    """The other side of the rule: with everything below it acknowledged, the resent tail
    is also the first unacknowledged segment, and 1 s is a wait only a timer makes."""
    c = Capture()
    _tail_then(c, 1.0101, acked_to=9001)
    trace = airtrace.read(c.write(tmp_path / "rto.pcap"))
    packets = trace.packets(columns=["frame", "retrans_kind", "backoff"]).set_index("frame")
    last = packets.index.max()
    assert (packets.loc[last, "retrans_kind"], packets.loc[last, "backoff"]) == ("timeout", 1)
    (row,) = trace.connections.to_dict("records")
    assert (row["a_to_b.tail_loss_probes"], row["a_to_b.timeouts"]) == (0, 1)


def _resent_after(waits: tuple[float, ...], tmp_path: Path) -> dict:
    """The server's only data segment goes unacknowledged and is resent after each of
    `waits`; the timeout_backoff finding about it."""
    c = Capture()
    c.add(0.00, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 0, 0, SYN)))
    c.add(0.01, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 100, 1, SYN | ACK)))
    c.add(0.02, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101, ACK)))
    c.add(0.03, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101, ACK | PSH, payload=b"x" * 100)))
    t = 0.04
    c.add(t, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 101, 101, ACK | PSH, payload=b"r" * 1000, ip_id=1)))
    for i, wait in enumerate(waits):
        t += wait
        c.add(t, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 101, 101, ACK | PSH, payload=b"r" * 1000, ip_id=2 + i)))
    c.add(t + 0.01, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 101, 1101, ACK)))
    findings = airtrace.read(c.write(tmp_path / "resent.pcap")).findings
    (found,) = findings[findings.kind == "timeout_backoff"].to_dict("records")
    return found


def test_waits_that_do_not_double_are_not_called_a_doubling_rto(tmp_path: Path) -> None:
    """Class 7: "the RTO doubles after each unanswered retransmission" was printed over
    waits of 0.30 s, 0.30 s, 0.30 s: the measured growth is said instead."""
    found = _resent_after((0.3, 0.3, 0.3), tmp_path)
    assert "doubl" not in found["explanation"].replace("not the doubling", ""), found["explanation"]
    assert "the sender waited 0.30 s, then 0.30 s, then 0.30 s (each wait ×1.00, then ×1.00 the one before: " \
        "not the doubling of RFC 6298's backoff" in found["explanation"]


def test_waits_that_double_are_called_so(tmp_path: Path) -> None:
    found = _resent_after((0.3, 0.6, 1.2), tmp_path)
    assert "(the RTO doubled after each unanswered retransmission)" in found["explanation"], found["explanation"]


def test_capture_duplicates_are_found_in_the_direction_they_travelled(tmp_path: Path) -> None:
    """Class 7: `capture_artifact` (and `mac_retries`) were labelled `a_to_b` whatever
    direction the copies travelled in; here the server's frames are the ones captured
    twice (a span port copying them 20 µs apart)."""
    c = Capture()
    c.add(0.00, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 0, 0, SYN, ip_id=1)))
    c.add(0.01, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 100, 1, SYN | ACK, ip_id=100)))
    c.add(0.02, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101, ACK, ip_id=2)))
    for i in range(3):
        t = 0.03 + i * 0.01
        segment = ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 101 + 1000 * i, 1, ACK, payload=b"r" * 1000, ip_id=101 + i))
        c.add(t, segment)
        c.add(t + 0.00002, segment)
        c.add(t + 0.005, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 1101 + 1000 * i, ACK, ip_id=3 + i)))
    findings = airtrace.read(c.write(tmp_path / "span-copies.pcap")).findings
    (found,) = findings[findings.kind == "capture_artifact"].to_dict("records")
    assert (found["direction"], found["details"]["duplicate_frames"], found["evidence"]) == ("b_to_a", 3, [5, 8, 11])


def _lone_segments(answer: str, next_after_ack: float, tmp_path: Path) -> list[str]:
    """The client sends five lone 100-byte segments on a 10 ms path; each is answered
    200 ms later (`answer`: "ack", a pure ACK, or "reply", the server's data), and the
    client's next segment leaves `next_after_ack` s after that answer. The kinds found."""
    c = Capture()
    c.add(0.000, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 0, 0, SYN)))
    c.add(0.010, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, 100, 1, SYN | ACK)))
    c.add(0.020, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101, ACK)))
    t, server_seq = 0.03, 101
    for i in range(5):
        c.add(t, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1 + 100 * i, server_seq, ACK | PSH, payload=b"q" * 100)))
        t += 0.2
        reply = b"r" * 50 if answer == "reply" else b""
        c.add(t, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, server_seq, 101 + 100 * i, ACK | PSH, payload=reply)))
        server_seq += len(reply)
        t += next_after_ack
    c.add(t, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 501, server_seq, ACK)))
    return airtrace.read(c.write(tmp_path / f"lone-{answer}.pcap")).findings["kind"].tolist()


def test_a_request_answered_by_its_reply_is_no_delayed_ack_stall(tmp_path: Path) -> None:
    """Class 7: `delayed_ack_stall` on request/response traffic: each request waited
    200 ms for the server's reply, which carried the ACK; no delayed ACK held it."""
    assert "delayed_ack_stall" not in _lone_segments("reply", 0.001, tmp_path)


def test_an_application_paced_sender_is_no_delayed_ack_stall(tmp_path: Path) -> None:
    """Class 7: the ACKs came 200 ms late, but the sender wrote its next segment a
    second after each ACK: it was not waiting for them."""
    assert "delayed_ack_stall" not in _lone_segments("ack", 1.0, tmp_path)


def test_a_sender_released_by_each_late_ack_is_a_delayed_ack_stall(tmp_path: Path) -> None:
    """The case the finding is for: each next segment left as soon as the late ACK came."""
    assert "delayed_ack_stall" in _lone_segments("ack", 0.001, tmp_path)


def _two_syn_acks_then_data(tmp_path: Path, *, isns: tuple[int, ...], accepted: int) -> dict:
    """The server answers one SYN with SYN/ACKs of initial sequence numbers `isns`, the
    client acknowledges `accepted` + 1, and the server sends 3000 bytes in that space."""
    c = Capture()
    c.add(0.000, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 0, 0, SYN)))
    for i, isn in enumerate(isns):
        c.add(0.010 + 0.001 * i, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, isn, 1, SYN | ACK)))
    c.add(0.020, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, accepted + 1, ACK)))
    c.add(0.030, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, accepted + 1, ACK | PSH, payload=b"q" * 100)))
    for i in range(3):
        c.add(0.040 + 0.001 * i, ethernet(ipv4_tcp(SERVER, CLIENT, 80, 1000, accepted + 1 + 1000 * i, 101, ACK,
                                                   payload=b"r" * 1000)))
    c.add(0.050, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 101, accepted + 3001, ACK)))
    trace = airtrace.read(c.write(tmp_path / "syn-acks.pcap"))
    (row,) = trace.connections.to_dict("records")
    assert trace.warnings == []
    return row


def test_the_first_of_two_syn_acks_is_followed_when_the_client_acknowledges_it(tmp_path: Path) -> None:
    """Class 3 before data (`ndpi_KakaoTalk_talk` conn 3): two SYN/ACKs 1 ms apart with
    different ISNs; the client acknowledged the first and the data used its space, but
    the analysis rebased on the second: the data became retransmissions, with 16 MB in
    flight, a timeout, a receiver limit and a spurious timeout."""
    row = _two_syn_acks_then_data(tmp_path, isns=(5_000, 900_000_000), accepted=5_000)
    assert (row["b_to_a.retransmitted_packets"], row["b_to_a.unique_bytes"], row["b_to_a.missed_bytes"]) == (0, 3000, 0)


def test_the_last_of_several_syn_acks_is_followed_when_the_client_acknowledges_it(tmp_path: Path) -> None:
    """Class 3 before data (`ndpi_tls_multiple_synack_different_seq`): three SYN/ACKs
    with new ISNs, the data in the last one's space, which wraps below the first: it was
    kept out as "after data had flowed" (the highest byte of the first space was never
    forgotten), with 1.7 GB in flight and the warning that the data went on in the first
    space, which was false."""
    row = _two_syn_acks_then_data(tmp_path, isns=(238_755_595, 2_859_879_429, 2_829_651_200), accepted=2_829_651_200)
    assert (row["b_to_a.retransmitted_packets"], row["b_to_a.unique_bytes"], row["b_to_a.missed_bytes"]) == (0, 3000, 0)


def test_a_capture_of_one_direction_is_said_to_be_one(tmp_path: Path) -> None:
    """Class 8 (missed): an uplink-only capture (`ndpi_ocs`, `ndpi_whatsapp`, a
    half-duplex SSH capture) was analysed as if the peer had sent nothing, and nothing
    said that the capture held one side only."""
    c = Capture()
    c.add(0.000, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 0, 0, SYN)))
    c.add(0.020, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 101, ACK)))
    for i in range(3):
        c.add(0.03 + 0.01 * i, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1 + 100 * i, 101, ACK | PSH, payload=b"q" * 100)))
    c.add(1.0, ethernet(ipv4_tcp(CLIENT, SERVER, 2000, 80, 0, 0, SYN)))  # unanswered: not one-sided
    trace = airtrace.read(c.write(tmp_path / "uplink.pcap"))
    assert trace.warnings == [
        f"{trace.path}: 1 of 2 connection(s) seen in one direction only (first: connection 0, frame 1): the capture "
        "holds one side of them (an asymmetric route, or a capture of one direction), so what the other side sent, "
        "its losses and its timing are not known"
    ]


def test_losses_of_the_direction_not_captured_are_found_in_its_receivers_acks(tmp_path: Path) -> None:
    """Class 8 (missed): an uplink-only capture of a download (`ndpi_ocs` conn 7: 290
    duplicate ACKs, no finding). The client's ACKs hold runs of duplicate ACKs, each
    ended by an ACK that moves on: holes in the server's data, and how long the client
    waited for each."""
    c = Capture()
    c.add(0.000, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 0, 0, SYN)))
    c.add(0.050, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 1, ACK)))
    c.add(0.060, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 1, 1, ACK | PSH, payload=b"GET")))
    t, ack = 0.2, 1
    for hole, wait in ((0, 0.3), (1, 0.5)):
        for _ in range(2):  # data in order
            ack += 1000
            c.add(t, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 4, ack, ACK)))
            t += 0.01
        for _ in range(4):  # a segment missing: the ACK repeats
            c.add(t, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 4, ack, ACK)))
            t += 0.01
        t += wait - 0.04
        ack += 5000  # the repair fills the hole and what came after it
        c.add(t, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 80, 4, ack, ACK)))
        t += 0.01
    trace = airtrace.read(c.write(tmp_path / "uplink-of-a-download.pcap"))
    (found,) = trace.findings.to_dict("records")
    assert (found["kind"], found["direction"]) == ("unseen_losses", "b_to_a")
    assert found["details"]["repairs"] == 2
    assert found["cost_s"] == pytest.approx(0.3 + 0.5, abs=1e-6)
    assert "holes" in found["explanation"]


def test_a_frame_captured_again_cut_short_is_a_capture_duplicate(tmp_path: Path) -> None:
    """Class 2 (`ivre_telnet-raw` frames 87, 217, 268): each repeats the frame before it
    1.3 ms later with the same IP ID and TCP checksum, two bytes shorter than its IP
    length says. Its captured bytes differed from the original's, so it was taken for a
    retransmission: three timeouts, a "random loss" and a fast_retransmit_impossible."""
    c = Capture()
    c.add(0.000, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 23, 0, 0, SYN, ip_id=1)))
    c.add(0.010, ethernet(ipv4_tcp(SERVER, CLIENT, 23, 1000, 100, 1, SYN | ACK, ip_id=100)))
    c.add(0.020, ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 23, 1, 101, ACK, ip_id=2)))
    seq, t = 1, 1.0
    for i in range(3):
        keystroke = ethernet(ipv4_tcp(CLIENT, SERVER, 1000, 23, seq, 101, ACK | PSH, payload=b"\r\0", ip_id=3 + i))
        c.add(t, keystroke)
        c.add(t + 0.0013, keystroke[:-2])
        c.add(t + 0.01, ethernet(ipv4_tcp(SERVER, CLIENT, 23, 1000, 101, seq + 2, ACK, ip_id=101 + i)))
        seq, t = seq + 2, t + 1.0
    trace = airtrace.read(c.write(tmp_path / "telnet.pcap"))
    packets = trace.packets(columns=["frame", "capture_duplicate", "retransmission"]).set_index("frame")
    assert packets.loc[[5, 8, 11], "capture_duplicate"].all()
    assert not packets["retransmission"].any()
    assert trace.findings[trace.findings.kind.isin(["timeout_backoff", "random_loss"])].empty
