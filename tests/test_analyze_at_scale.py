"""`airtrace analyze --parquet OUT DIR_OR_GLOB` over many captures (issue 15 item 5): the
captures under a directory or matching a pattern are analysed on the sweep's workers
(every core, or a Dask cluster) and written as one pair of tables, the same wherever
they were analysed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from airtrace import export
from conftest import CORPUS

CLI = [sys.executable, "-m", "airtrace.cli"]
#: Real captures of several link types, some gzipped.
CAPTURES = [
    "zeek_retransmit-fast009.pcap", "ppa_tcp_dupack.pcapng", "arkime_80211http.pcap", "tcptrace_long_rtt.dmp.gz",
    "ppa_tcp_retransmissions.pcapng",
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """captures/ with three captures at the top, two in sub/, and a file that is not one."""
    root = tmp_path_factory.mktemp("captures")
    (root / "sub").mkdir()
    for i, name in enumerate(CAPTURES):
        shutil.copy(CORPUS / name, root / ("sub" if i >= 3 else ".") / name)
    (root / "README.txt").write_text("not a capture")
    return root


def analyze(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "analyze", *args], capture_output=True, text=True)


def tables(out: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    return pq.read_table(out / "connections.parquet").to_pandas(), pq.read_table(out / "packets.parquet").to_pandas()


def test_a_directory_is_its_captures_at_any_depth_sorted(tree: Path) -> None:
    found = export.captures_in([str(tree)])
    assert [Path(p).relative_to(tree).as_posix() for p in found] == sorted(
        [CAPTURES[0], CAPTURES[1], CAPTURES[2], f"sub/{CAPTURES[3]}", f"sub/{CAPTURES[4]}"]
    )
    assert export.captures_in([f"{tree}/**/*.pcapng"]) == [str(tree / CAPTURES[1]), str(tree / "sub" / CAPTURES[4])]


@pytest.mark.parametrize(
    ("given", "message"),
    [("empty", "a directory holding no capture"), ("nothing-*.pcap", "no file matches")],
)
def test_a_directory_or_pattern_giving_no_capture_is_one_line(tmp_path: Path, given: str, message: str) -> None:
    (tmp_path / "empty").mkdir()
    done = analyze("--parquet", str(tmp_path / "out"), str(tmp_path / given))
    assert done.returncode == 1 and done.stderr == f"airtrace: error: {tmp_path / given}: {message}" + (
        " (.pcap, .pcap.gz, .pcapng, .pcapng.gz, .cap, .cap.gz, .dmp, .dmp.gz)\n" if given == "empty" else "\n"
    )
    assert not (tmp_path / "out").exists()


def test_workers_need_parquet() -> None:
    done = analyze("--jobs", "2", str(CORPUS / CAPTURES[0]))
    assert done.returncode == 2 and done.stderr == "airtrace: error: --jobs, --scheduler and --cluster go with --parquet\n"


def test_one_process_the_pool_and_a_dask_cluster_write_the_same_tables(tree: Path, tmp_path: Path) -> None:
    runs = {}
    for way, flags in {"one": ["--jobs", "1"], "pool": ["--jobs", "2"], "dask": ["--jobs", "2", "--cluster", "local"]}.items():
        out = tmp_path / way
        done = analyze("--parquet", str(out), str(tree), "--no-progress", *flags)
        assert done.returncode == 0, done.stderr
        assert done.stderr.splitlines()[-2:] == [f"airtrace: wrote {out}/connections.parquet", f"airtrace: wrote {out}/packets.parquet"]
        runs[way] = (done.stdout, *tables(out))
    stdout, connections, packets = runs["one"]
    files = export.captures_in([str(tree)])
    assert list(dict.fromkeys(packets["file"])) == files, "rows in the order the captures were given"
    assert list(dict.fromkeys(connections["file"])) == files
    assert [line.split(":")[0] for line in stdout.splitlines() if " frames, " in line] == files
    for way in ("pool", "dask"):
        assert runs[way][0] == stdout, f"{way}: the same tables printed"
        pd.testing.assert_frame_equal(runs[way][1], connections)
        pd.testing.assert_frame_equal(runs[way][2], packets)


def test_an_unreadable_capture_among_many_is_named_and_the_rest_written(tree: Path, tmp_path: Path) -> None:
    bad = tmp_path / "in" / "bad.pcap"
    bad.parent.mkdir()
    bad.write_bytes(b"garbage, not a capture")
    shutil.copy(CORPUS / CAPTURES[0], tmp_path / "in" / CAPTURES[0])
    out = tmp_path / "out"
    done = analyze("--parquet", str(out), str(tmp_path / "in"), "--jobs", "2", "--no-progress")
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == f"airtrace: error: {bad}: byte 0: not a capture file (magic number 0x67617262)"
    _, packets = tables(out)
    assert set(packets["file"]) == {str(tmp_path / "in" / CAPTURES[0])} and len(packets) == 39
