"""Issue 17 item 9: what tshark and tcptrace users expect of `airtrace analyze`: a
connection filter (`--conn`, tcptrace's -o), a display filter over the packets
(`--filter`, tshark's -Y), sorting the table (`--sort`), and tcptrace's columns
(initial window, max retransmission wait, pushed and urgent data packets, complete
connections), agreeing with tcptrace where the capture gives both the same packets."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import airtrace
from airtrace.packet_filter import FilterError, mask
from conftest import CORPUS, corpus_files

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "testdata" / "pcaps" / "sample-sender.pcapng"
CLI = [sys.executable, "-m", "airtrace.cli"]


def analyze(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "analyze", "--no-progress", *args], capture_output=True, text=True)


def table_ids(out: str) -> list[int]:
    """The connection ids of a table, in its order (the first cell of a connection's line)."""
    return [int(m.group(1)) for m in re.finditer(r"^\s*(\d+)\s+\S+ → ", out, flags=re.M)]


def test_conn_shows_only_those_connections_in_the_table_and_the_json() -> None:
    done = analyze(str(SAMPLE), "--conn", "1,3-4")
    assert done.returncode == 0, done.stderr
    assert table_ids(done.stdout) == [1, 3, 4]
    assert done.stdout.splitlines()[0].endswith(" 7 connections, 3 shown")
    done = analyze(str(SAMPLE), "--conn", "1", "--json")
    (report,) = json.loads(done.stdout)["files"]
    assert [c["id"] for c in report["connections"]] == [1]
    assert report["findings"] and {f["connection"] for f in report["findings"]} == {1}


def test_an_unknown_connection_is_an_error_naming_the_file_and_the_ids() -> None:
    done = analyze(str(SAMPLE), "--conn", "9")
    assert done.returncode == 1
    assert done.stderr == f"airtrace: error: {SAMPLE}: no connection 9; --conn takes 0-6\n"
    done = analyze(str(SAMPLE), "--conn", "6-8")
    assert done.returncode == 0 and table_ids(done.stdout) == [6]
    assert done.stderr == f"airtrace: warning: {SAMPLE}: no connection 7, 8 (its connections: 0-6)\n"


def test_conn_that_is_not_ids_is_a_usage_error() -> None:
    done = analyze(str(SAMPLE), "--conn", "one")
    assert done.returncode == 2
    assert "argument --conn: 'one' is not a list of connection ids (e.g. 3, 1,4 or 2-5)" in done.stderr


@pytest.mark.parametrize(
    ("key", "first"), [("bytes", 1), ("duration", 1), ("packets", 1), ("retrans", 1), ("time", 0), ("id", 0)]
)
def test_sort_orders_the_table_and_the_json(key: str, first: int) -> None:
    done = analyze(str(SAMPLE), "--sort", key)
    assert done.returncode == 0, done.stderr
    ids = table_ids(done.stdout)
    assert sorted(ids) == list(range(7)) and ids[0] == first
    if key in ("time", "id"):
        assert ids == list(range(7))
    report = json.loads(analyze(str(SAMPLE), "--sort", key, "--json").stdout)["files"][0]
    assert [c["id"] for c in report["connections"]] == ids


def test_sort_by_an_unknown_key_names_the_keys() -> None:
    done = analyze(str(SAMPLE), "--sort", "size")
    assert done.returncode == 2
    assert "argument --sort: invalid choice: 'size' (choose from 'id', 'time', 'duration', 'packets', 'bytes'" in done.stderr


@pytest.fixture(scope="module")
def packets() -> pd.DataFrame:
    return airtrace.read(CORPUS / "zeek_retransmit-fast009.pcap").packets()


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("retransmission and conn == 0", lambda p: p.retransmission & (p.conn == 0)),
        ("retrans_kind == sack or duplicate_ack", lambda p: (p.retrans_kind == "sack") | p.duplicate_ack),
        ("not (seglen > 0) && dir == 1", lambda p: ~(p.seglen > 0) & (p.dir == 1)),
        ("ack_rtt >= 0.05", lambda p: p.ack_rtt >= 0.05),
        ("tcp_flags == 0x18", lambda p: p.tcp_flags == 0x18),
        ("dupack_num == 2", lambda p: p.dupack_num == 2),
    ],
)
def test_filter_keeps_the_rows_the_expression_says(packets: pd.DataFrame, expression: str, expected) -> None:  # type: ignore[no-untyped-def]
    want = expected(packets).fillna(False).astype(bool)
    assert want.any(), "a filter that keeps nothing proves little"
    assert mask(packets, expression).tolist() == want.tolist()


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("retransmision", "unknown column 'retransmision', did you mean 'retransmission'?; the columns are: frame, time,"),
        ("conn ==", "the expression ends where a value to compare conn with was expected"),
        ("conn == 3 )", "unexpected ')' after a complete expression"),
        ("(conn == 3", "the expression ends where ')' was expected"),
        ("seglen", "'seglen' is not true or false; compare it: seglen == VALUE"),
        ("seglen > big", "'big' is not a value of seglen (UInt32)"),
        ("retrans_kind < sack", "retrans_kind has no order; use == or !="),
        ("__import__('os').system('touch pwned')", "unknown column '__import__'"),
        ("", "empty expression"),
    ],
)
def test_a_bad_filter_is_one_line_naming_the_token(packets: pd.DataFrame, expression: str, message: str) -> None:
    with pytest.raises(FilterError) as e:
        mask(packets, expression)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_analyze_filter_lists_the_packets_it_keeps(tmp_path: Path) -> None:
    capture = CORPUS / "zeek_retransmit-fast009.pcap"
    done = analyze(str(capture), "--filter", "retransmission and conn == 0")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{capture}: 3 packets"
    assert lines[1].split()[:3] == ["frame", "time_rel", "conn"]
    rows = [line.split() for line in lines[2:]]
    p = airtrace.read(capture).packets()
    assert [int(r[0]) for r in rows] == p.loc[p.retransmission, "frame"].tolist()
    assert all("retransmission" in r[-1] for r in rows)
    listed = json.loads(analyze(str(capture), "--packets", "--conn", "0", "--json").stdout)["files"][0]["packets"]
    assert [r["frame"] for r in listed] == p["frame"].tolist()
    bad = subprocess.run([*CLI, "analyze", str(capture), "--filter", "__import__('os').system('touch pwned')"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.startswith("airtrace: error: --filter: unknown column '__import__'")
    assert not (tmp_path / "pwned").exists()


def _tcptrace(tcptrace: str, path: Path) -> list[dict[str, list[str]]]:
    """tcptrace -l's fields per connection: name → [a->b value, b->a value] (or [value])."""
    done = subprocess.run([tcptrace, "-l", "-n", "-r", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"tcptrace fails on {path.name} (exit status {done.returncode})")
    out = done.stdout
    conns = []
    for block in re.split(r"\nTCP connection \d+:\n", out)[1:]:
        fields: dict[str, list[str]] = {"complete conn": [re.search(r"complete conn: (\S+)", block).group(1)]}  # type: ignore[union-attr]
        for line in block.splitlines():
            for name, value in re.findall(r"([a-z][a-z #/]+?):\s+(-?[\d.]+)", line):
                fields.setdefault(name.split("  ")[-1].strip(), []).append(value)
        conns.append(fields)
    return conns


#: Captures with the same frame twice (switch mirrors, capture hardware): airtrace sets
#: the copies aside (docs/analysis.md), tcptrace counts them, so its counts are higher.
CAPTURE_DUPLICATES = {"arkime_wireshark-retrans.pcap", "tcptrace_hardware_dups.dmp.gz", "zeek_m57-long-49583-80.pcap",
                      "tcptrace_discard.solaris.dmp.gz"}


@pytest.mark.parametrize("capture", [p.name for p in corpus_files() if p.name not in CAPTURE_DUPLICATES])
def test_pushed_urgent_and_complete_agree_with_tcptrace(capture: str, tcptrace: str) -> None:
    ours = airtrace.read(CORPUS / capture).connections
    theirs = _tcptrace(tcptrace, CORPUS / capture)
    if len(theirs) != len(ours) or len(ours) == 0:
        pytest.skip(f"tcptrace finds {len(theirs)} connections, airtrace {len(ours)} (tunnels, 802.11)")
    for (_, c), t in zip(ours.iterrows(), theirs):
        assert [c["a_to_b.pushed_data_packets"], c["b_to_a.pushed_data_packets"]] == list(map(int, t["pushed data pkts"]))
        assert [c["a_to_b.urgent_data_packets"], c["b_to_a.urgent_data_packets"]] == list(map(int, t["urgent data pkts"]))
        complete = "RESET" if c["state"] == "reset" else ("yes" if c["complete"] else "no")
        assert complete == t["complete conn"][0], c["id"]


@pytest.mark.parametrize("capture", ["tcptrace_http.dmp.gz", "tcptrace_dsack.dmp.gz", "ppa_tcp_retransmissions.pcapng",
                                     "zeek_206_example_b.pcap", "tcptrace_long_rtt.dmp.gz"])
def test_initial_window_and_max_retransmission_wait_agree_with_tcptrace(capture: str, tcptrace: str) -> None:
    """On these captures, where every retransmitted segment was captured before: the
    first flight of each direction that sent a SYN, and the longest wait before a
    retransmission (tcptrace -l's "initial window" and "max retr time")."""
    ours = airtrace.read(CORPUS / capture).connections
    theirs = _tcptrace(tcptrace, CORPUS / capture)
    waits = 0
    for (_, c), t in zip(ours.iterrows(), theirs, strict=True):
        iw = t["initial window"]  # bytes a->b, bytes b->a, packets a->b, packets b->a
        for i, d in enumerate(("a_to_b", "b_to_a")):
            if c[f"{d}.syn"]:
                assert (c[f"{d}.initial_window_bytes"], c[f"{d}.initial_window_packets"]) == (int(iw[i]), int(iw[2 + i]))
            wait = c[f"{d}.max_retransmit_wait_s"]
            assert (0.0 if pd.isna(wait) else wait) == pytest.approx(float(t["max retr time"][i]) / 1e3, abs=1e-4)
            waits += not pd.isna(wait)
    if capture in ("ppa_tcp_retransmissions.pcapng", "zeek_206_example_b.pcap"):
        assert waits > 0
