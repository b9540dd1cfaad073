"""Proof of the classes where airtrace and tshark disagree and airtrace is right:
captures with known truth, where tshark reports loss that never happened."""

from __future__ import annotations

import subprocess

import pytest
from pathlib import Path

import airtrace
from pcapgen import ACK, PSH, SYN, Capture, ethernet, ipv4_tcp, radiotap_wlan

CLIENT, SERVER = "198.18.0.1", "198.18.0.2"
MSS = 1000


def tshark_frames(tshark: str, path: Path, flt: str, *prefs: str) -> set[int]:
    cmd = [tshark, "-n", "-r", str(path), "-Y", flt, "-T", "fields", "-e", "frame.number"]
    for p in prefs:
        cmd += ["-o", p]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return {int(x) for x in out.split()}


def bulk_transfer(dup_every_frame: bool) -> tuple[Capture, int]:
    """A server sends 20 segments; segment 10 is lost after the capture point, three
    duplicate ACKs follow, and the server fast-retransmits it (a new IP ID). With
    `dup_every_frame`, the capture holds every frame twice, 2 µs apart.
    Returns the capture and the frame number of the one true retransmission."""
    cap = Capture()
    t = 0.0
    server_id, client_id = 1000, 5000
    true_retransmission = 0

    def emit(frame: bytes, from_server: bool) -> None:
        nonlocal t, true_retransmission
        t += 0.001
        cap.add(t, ethernet(frame))
        if dup_every_frame:
            cap.add(t + 2e-6, ethernet(frame))

    def seg(seq: int, ack: int, flags: int, payload: bytes = b"") -> bytes:
        nonlocal server_id
        server_id += 1
        return ipv4_tcp(SERVER, CLIENT, 80, 40000, seq, ack, flags, payload=payload, ip_id=server_id)

    def ack(seq: int, ackno: int, flags: int = ACK) -> bytes:
        nonlocal client_id
        client_id += 1
        return ipv4_tcp(CLIENT, SERVER, 40000, 80, seq, ackno, flags, ip_id=client_id)

    emit(ack(100, 0, SYN), False)
    emit(seg(5000, 101, SYN | ACK), True)
    emit(ack(101, 5001), False)
    for i in range(20):
        emit(seg(5001 + i * MSS, 101, ACK | PSH, bytes([i]) * MSS), True)
        if i < 10:
            emit(ack(101, 5001 + (i + 1) * MSS), False)
        elif i > 10:
            emit(ack(101, 5001 + 10 * MSS), False)  # duplicate ACKs for segment 10
        if i == 13:
            emit(seg(5001 + 10 * MSS, 101, ACK | PSH, bytes([10]) * MSS), True)
            true_retransmission = len(cap.frames) - (1 if dup_every_frame else 0)
    emit(ack(101, 5001 + 20 * MSS), False)
    return cap, true_retransmission


def test_capture_duplicates_are_not_retransmissions(tmp_path: Path, tshark: str) -> None:
    cap, truth = bulk_transfer(dup_every_frame=True)
    path = cap.write(tmp_path / "dups.pcap")
    p = airtrace.read(path).packets()
    assert set(p.loc[p.retransmission, "frame"]) == {truth}
    assert p.loc[p.frame == truth, "fast_retransmission"].item()
    copies = set(p.loc[p.capture_duplicate, "frame"])
    assert copies == set(range(2, len(cap.frames) + 1, 2)), "every second frame is a copy"
    assert p.loc[p.duplicate_ack, "frame"].size == 9, "the 9 real duplicate ACKs, not their copies"
    # tshark takes the copies for retransmissions and duplicate ACKs:
    theirs = tshark_frames(tshark, path, "tcp.analysis.retransmission")
    assert len(theirs) > 20 and copies & theirs


def test_without_copies_both_tools_see_one_retransmission(tmp_path: Path, tshark: str) -> None:
    cap, truth = bulk_transfer(dup_every_frame=False)
    path = cap.write(tmp_path / "clean.pcap")
    p = airtrace.read(path).packets()
    assert set(p.loc[p.retransmission, "frame"]) == {truth}
    assert not p.capture_duplicate.any()
    assert tshark_frames(tshark, path, "tcp.analysis.retransmission") == {truth}


def test_mac_retries_are_not_tcp_retransmissions(tmp_path: Path, tshark: str) -> None:
    ap, station = bytes.fromhex("020000000001"), bytes.fromhex("020000000002")
    cap = Capture(linktype=127)
    t, wseq = 0.0, 100
    retries = []
    for i in range(6):
        frame = ipv4_tcp(CLIENT, SERVER, 40000, 80, 101 + i * MSS, 5001, ACK, payload=bytes([i]) * MSS, ip_id=7000 + i)
        t += 0.002
        cap.add(t, radiotap_wlan(frame, seq=wseq, retry=False, transmitter=station, receiver=ap))
        if i % 2 == 1:  # the 802.11 ACK was lost: the MAC sends the frame again
            t += 0.0005
            cap.add(t, radiotap_wlan(frame, seq=wseq, retry=True, transmitter=station, receiver=ap))
            retries.append(len(cap.frames))
        wseq += 1
    path = cap.write(tmp_path / "wlan.pcap")
    p = airtrace.read(path).packets()
    assert set(p.loc[p.mac_retry, "frame"]) == set(retries)
    assert not p.retransmission.any()
    # tshark with its default preferences passes the retries to TCP, which calls them
    # retransmissions; only with wlan.retransmitted:FALSE does it drop them.
    assert tshark_frames(tshark, path, "tcp.analysis.retransmission") == set(retries)
    assert tshark_frames(tshark, path, "tcp.analysis.retransmission", "wlan.retransmitted:FALSE") == set()


def test_a_quick_repeat_at_the_sender_is_a_retransmission_not_out_of_order(tmp_path: Path, tshark: str) -> None:
    """At the sender, segment 2 of 3 is lost after the capture point; one duplicate
    ACK (with SACK) comes back and the sender retransmits at once (early retransmit,
    RFC 5827). tshark sees the repeat within one initial RTT of the highest segment
    and calls it out_of_order; the bytes were captured before, so it is a retransmission."""
    cap = Capture()
    c, s = (CLIENT, 40000), (SERVER, 80)

    def up(t: float, seq: int, ack: int, flags: int, payload: bytes = b"", ip_id: int = 0, options: bytes = b"") -> None:
        cap.add(t, ethernet(ipv4_tcp(c[0], s[0], c[1], s[1], seq, ack, flags, payload=payload, ip_id=ip_id, options=options)))

    def down(t: float, seq: int, ack: int, flags: int, ip_id: int, options: bytes = b"") -> None:
        cap.add(t, ethernet(ipv4_tcp(s[0], c[0], s[1], c[1], seq, ack, flags, ip_id=ip_id, options=options)))

    sack_ok = b"\x04\x02"
    up(0.0, 100, 0, SYN, ip_id=1, options=sack_ok)
    down(0.0010, 500, 101, SYN | ACK, ip_id=1, options=sack_ok)
    up(0.0011, 101, 501, ACK, ip_id=2)
    for i in range(3):
        up(0.0020 + i * 1e-5, 101 + i * MSS, 501, ACK | PSH, bytes([i]) * MSS, ip_id=3 + i)
    down(0.0025, 501, 101 + MSS, ACK, ip_id=2)
    sack = b"\x01\x01\x05\x0a" + (101 + 2 * MSS).to_bytes(4, "big") + (101 + 3 * MSS).to_bytes(4, "big")
    down(0.0026, 501, 101 + MSS, ACK, ip_id=3, options=sack)
    up(0.0027, 101 + MSS, 501, ACK | PSH, bytes([1]) * MSS, ip_id=6)
    down(0.0033, 501, 101 + 3 * MSS, ACK, ip_id=4)
    path = cap.write(tmp_path / "early.pcap")
    retransmission = len(cap.frames) - 1
    assert tshark_frames(tshark, path, "tcp.analysis.out_of_order") == {retransmission}
    assert tshark_frames(tshark, path, "tcp.analysis.retransmission") == set()
    p = airtrace.read(path).packets().set_index("frame")
    assert p.loc[retransmission, "retransmission"] and not p.loc[retransmission, "out_of_order"]
    assert p.loc[retransmission, "retrans_kind"] == "sack"
    assert p.loc[retransmission, "rto"] == pytest.approx(0.0027 - 0.00201, abs=1e-6)
