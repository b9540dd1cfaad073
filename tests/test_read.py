"""The Python API: airtrace.read(), its DataFrames and the Parquet export."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import airtrace
from airtrace import _core
from airtrace.cli import main
from conftest import CORPUS
from pcapgen import ACK, PSH, SYN, Capture, ethernet, ipv4_tcp

WIRESHARK_FLAGS = [
    "retransmission", "fast_retransmission", "spurious_retransmission", "out_of_order", "lost_segment",
    "ack_lost_segment", "duplicate_ack", "zero_window", "zero_window_probe", "zero_window_probe_ack",
    "window_full", "window_update", "keep_alive", "keep_alive_ack", "reused_ports",
]


def test_packets_table_has_one_row_per_frame_numbered_like_tshark() -> None:
    trace = airtrace.read(CORPUS / "ppa_tcp_dupack.pcapng")
    p = trace.packets()
    assert len(p) == trace.frames == 9
    assert p["frame"].tolist() == list(range(1, 10))
    assert p["conn"].tolist() == [0] * 9
    dup = p.loc[p.duplicate_ack, ["frame", "dupack_num"]].values.tolist()
    assert dup == [[3, 1], [5, 2], [7, 3]]
    assert p.loc[p.fast_retransmission, "frame"].tolist() == [8]
    assert p.loc[p.frame == 8, "retrans_kind"].item() == "fast_retransmit"


def test_flag_columns_are_named_as_wireshark_names_them() -> None:
    p = airtrace.read(CORPUS / "ppa_tcp_dupack.pcapng").packets()
    for name in WIRESHARK_FLAGS + ["mac_retry", "capture_duplicate"]:
        assert p[name].dtype == bool, name
    assert _core.flag_names()[: len(WIRESHARK_FLAGS)] == WIRESHARK_FLAGS


def test_packets_columns_keeps_those_in_that_order_with_the_same_values() -> None:
    trace = airtrace.read(CORPUS / "zeek_retransmit-fast009.pcap")
    whole = trace.packets()
    some = trace.packets(columns=["retrans_kind", "frame", "time", "ack_rtt"])
    assert list(some.columns) == ["retrans_kind", "frame", "time", "ack_rtt"]
    pd.testing.assert_frame_equal(some, whole[["retrans_kind", "frame", "time", "ack_rtt"]])
    arrow = trace.packets_arrow(columns=["seq_rel", "conn"])
    assert arrow.column_names == ["seq_rel", "conn"] and arrow.num_rows == len(whole) == 39


def test_packets_table_is_built_column_by_column_with_the_whole_table_dtypes() -> None:
    """Each column is converted on its own as it leaves Rust (issue 19 item 12); the
    DataFrame is the one the whole Arrow table converts to, dtypes included."""
    from airtrace.packet_table import to_pandas

    trace = airtrace.read(CORPUS / "arkime_80211http.pcap")
    pd.testing.assert_frame_equal(trace.packets(), to_pandas(trace.packets_arrow()))
    analysis = _core.analyze(str(CORPUS / "arkime_80211http.pcap"), packets=True)
    table = analysis.packets
    assert table is not None and table.rows == 26
    first = table.names
    assert table.take()[0] == first[0] == "frame"
    assert table.names == first[1:], "a column taken is gone from the Rust side"
    while table.take() is not None:
        pass
    assert table.names == [] and table.take() is None


@pytest.mark.parametrize(
    ("columns", "message"),
    [(["frame", "frmae"], "unknown column 'frmae'; the columns are: frame, time,"), (["frame", "frame"], "a column named twice")],
)
def test_packets_refuses_an_unknown_or_repeated_column_naming_the_columns(columns: list[str], message: str) -> None:
    with pytest.raises(ValueError, match="packets\\(columns=...\\): " + message):
        airtrace.read(CORPUS / "ppa_tcp_dupack.pcapng").packets(columns=columns)


def test_non_tcp_frames_have_no_connection() -> None:
    p = airtrace.read(CORPUS / "libtrace_10_packets_radiotap.pcap").packets()
    assert len(p) == 10 and p["conn"].isna().all()
    assert p["wlan_retry"].sum() == 4
    assert p["signal_dbm"].notna().any()


def test_connections_table() -> None:
    trace = airtrace.read(CORPUS / "ppa_tcp_retransmissions.pcapng")
    c = trace.connections
    assert len(c) == 1
    row = c.iloc[0]
    # One 648-byte segment retransmitted 5 times with a doubling RTO (MANIFEST.md).
    retx = row["a_to_b.retransmitted_packets"] + row["b_to_a.retransmitted_packets"]
    assert retx == 5
    assert max(row["a_to_b.max_backoff"], row["b_to_a.max_backoff"]) == 5
    p = trace.packets()
    assert p.loc[p.retransmission, "backoff"].tolist() == [1, 2, 3, 4, 5]
    gaps = p.loc[p.retransmission, "idle_gap"].round(1).tolist()
    assert gaps == [0.2, 0.6, 1.2, 2.4, 4.8]


def test_karn_rule_leaves_retransmitted_segments_without_rtt(tmp_path: Path, tshark: str) -> None:
    """Segment 1 is ACKed after 50 ms; segment 2 times out, is sent again and then
    ACKed: its ACK gives no RTT sample (Karn's rule). tshark measures it from the
    first transmission."""
    cap = Capture()
    c, s = ("198.18.0.1", 40000), ("198.18.0.2", 80)
    cap.add(0.000, ethernet(ipv4_tcp(c[0], s[0], c[1], s[1], 100, 0, SYN, ip_id=1)))
    cap.add(0.050, ethernet(ipv4_tcp(s[0], c[0], s[1], c[1], 500, 101, SYN | ACK, ip_id=1)))
    cap.add(0.100, ethernet(ipv4_tcp(c[0], s[0], c[1], s[1], 101, 501, ACK, ip_id=2)))
    cap.add(0.110, ethernet(ipv4_tcp(c[0], s[0], c[1], s[1], 101, 501, ACK | PSH, payload=b"a" * 100, ip_id=3)))
    cap.add(0.160, ethernet(ipv4_tcp(s[0], c[0], s[1], c[1], 501, 201, ACK, ip_id=2)))
    cap.add(0.170, ethernet(ipv4_tcp(c[0], s[0], c[1], s[1], 201, 501, ACK | PSH, payload=b"b" * 100, ip_id=4)))
    cap.add(1.170, ethernet(ipv4_tcp(c[0], s[0], c[1], s[1], 201, 501, ACK | PSH, payload=b"b" * 100, ip_id=5)))
    cap.add(1.220, ethernet(ipv4_tcp(s[0], c[0], s[1], c[1], 501, 301, ACK, ip_id=3)))
    path = cap.write(tmp_path / "karn.pcap")
    p = airtrace.read(path).packets().set_index("frame")
    assert p.loc[5, "ack_rtt"] == pytest.approx(0.050)
    assert pd.isna(p.loc[8, "ack_rtt"]), "ambiguous: the ACK may answer either transmission"
    assert p.loc[7, "retrans_kind"] == "timeout" and p.loc[7, "backoff"] == 1
    assert p.loc[7, "rto"] == pytest.approx(1.0)
    out = subprocess.run([tshark, "-r", str(path), "-Y", "frame.number == 8", "-T", "fields", "-e", "tcp.analysis.ack_rtt"],
                         capture_output=True, text=True, check=True).stdout
    assert float(out) == pytest.approx(1.050), "tshark measures from the original transmission"


def test_gzip_and_pcapng_read_the_same_way() -> None:
    for name in ["tcptrace_long_rtt.dmp.gz", "ndpi_alexa-app.pcapng"]:
        trace = airtrace.read(CORPUS / name)
        assert trace.frames > 0 and len(trace.connections) > 0


def test_analysis_error_for_a_file_that_is_not_a_capture(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello")
    with pytest.raises(airtrace.AnalysisError, match="notes.txt"):
        airtrace.read(bad)


def test_parquet_export_matches_the_dataframes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = [CORPUS / "ppa_tcp_dupack.pcapng", CORPUS / "zeek_retransmit-fast009.pcap"]
    assert main(["analyze", "--no-progress", "--parquet", str(tmp_path / "out"), *map(str, files)]) == 0
    packets = pq.read_table(tmp_path / "out" / "packets.parquet").to_pandas()
    conns = pq.read_table(tmp_path / "out" / "connections.parquet").to_pandas()
    assert len(packets) == 9 + 39
    assert set(packets["file"]) == {str(f) for f in files}
    assert len(conns) == 2
    assert packets["retransmission"].sum() == 1 + 3
    assert not list((tmp_path / "out").glob(".*.tmp")), "no temporary file left behind"


def test_json_output_parses_and_names_each_file(capsys: pytest.CaptureFixture[str]) -> None:
    f = CORPUS / "zeek_retransmit-fast009.pcap"
    assert main(["analyze", "--json", str(f)]) == 0
    report = json.loads(capsys.readouterr().out)
    (file_report,) = report["files"]
    assert file_report["path"] == str(f) and file_report["frames"] == 39
    d = file_report["connections"][0]["b_to_a"]
    assert (d["fast_retransmissions"], d["sack_retransmissions"]) == (1, 2)


def test_demo_runs_and_says_where_it_writes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out, err = capsys.readouterr()
    assert "198.18.0.1" in out and "retx" in out
    # Before the run and as the last word (issue 17 item 4), as the other commands do.
    (wrote,) = [line for line in err.splitlines() if line.startswith("airtrace: wrote ")]
    bundle = Path(wrote.removeprefix("airtrace: wrote "))
    assert f"Its bundle goes to {bundle} " in out and (bundle / "summary.json").is_file()


def test_the_sample_capture_shows_its_known_fade_and_stall() -> None:
    """The bundled capture was made with a 0.6 s fade (6.88-7.48 s) and a 2.5 s stall
    (13.52-16.02 s) on the link (testdata/pcaps/README.md). At the sender, the fade
    costs one timeout and its backed-off repeat; the stall three timeouts of the same
    segment, each waiting twice as long."""
    from importlib import resources

    with resources.as_file(resources.files("airtrace") / "data" / "sample-sender.pcapng") as path:
        p = airtrace.read(path).packets()
    expiries = p[(p.retrans_kind == "timeout") & (p.backoff >= 1)]
    got = [(int(r.frame), int(r.backoff), round(float(r.time_rel), 2)) for r in expiries.itertuples()]
    assert got == [(1140, 1, 7.18), (1141, 2, 7.82), (2163, 1, 14.09), (2164, 2, 14.73), (2165, 3, 16.01)]
    gaps = expiries["idle_gap"].round(2).tolist()
    assert gaps[2:] == [0.34, 0.64, 1.28], "the RTO doubles"
