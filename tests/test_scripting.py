"""Issue 17 item 6: Python and Parquet as users script them. What `dir()` and tab
completion offer, the connections table's index, Parquet column names in SQL, the
permissions of the files written, the packets table against its documentation, and
the typed stub of the compiled module."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import airtrace
from conftest import CORPUS

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "testdata" / "pcaps" / "sample-sender.pcapng"
CLI = [sys.executable, "-m", "airtrace.cli"]


def test_dir_of_the_package_is_its_public_api() -> None:
    """Tab completion (IPython, the REPL) lists `dir(airtrace)`: the names users may
    call, the lazily loaded ones included, and nothing private."""
    assert sorted(dir(airtrace)) == sorted(airtrace.__all__)
    assert {"read", "Trace", "simulate", "diagnose", "sweep", "query"} <= set(dir(airtrace))
    for name in airtrace.__all__:
        assert getattr(airtrace, name) is not None, name


@pytest.mark.parametrize("name", [n for n in airtrace.__all__ if n != "__version__"])
def test_every_public_name_has_a_help_text(name: str) -> None:
    doc = getattr(airtrace, name).__doc__
    assert doc and len(doc.split()) >= 4, f"airtrace.{name} has no help text"


def test_connections_index_is_not_also_a_column_and_joins_the_packets() -> None:
    """`reset_index()`, `query()` and joins must not meet two things of one name; the
    index is named as the packets table's connection column, so they join on it."""
    trace = airtrace.read(SAMPLE)
    c = trace.connections
    assert c.index.name == "conn" and "conn" not in c.columns
    assert c.reset_index()["conn"].tolist() == c["id"].tolist()
    p = trace.packets(columns=["frame", "conn"]).join(c[["a"]], on="conn")
    assert p["a"].notna().all() and len(p) == trace.frames


@pytest.fixture(scope="module")
def parquet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pq") / "out"
    done = subprocess.run([*CLI, "analyze", "--no-progress", "--parquet", str(out), str(SAMPLE)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("table", ["connections", "packets"])
def test_parquet_columns_work_unquoted_in_sql(parquet_dir: Path, table: str) -> None:
    """Every column of the files `analyze --parquet` writes can be named in DuckDB SQL
    without quotes (a direction's metrics are `a_to_b__retransmitted_packets`, the RTT
    statistics `a_to_b__rtt__min_s`; docs/analysis.md)."""
    import duckdb

    con = duckdb.connect()
    con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{parquet_dir / f'{table}.parquet'}')")
    columns = [row[0] for row in con.execute(f"DESCRIBE {table}").fetchall()]
    for column in columns:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", column), column
        con.execute(f"SELECT {column} FROM {table}").fetchall()
    assert not [c for c in columns if con.execute(f"SELECT typeof({c}) FROM {table} LIMIT 1").fetchone()[0].startswith("STRUCT")]


def test_parquet_connections_hold_what_the_dataframe_holds_under_flat_names(parquet_dir: Path) -> None:
    trace = airtrace.read(SAMPLE)
    row = trace.connections.iloc[0]
    got = airtrace.query(
        parquet_dir,
        "SELECT id, b_to_a__retransmitted_packets AS retx, b_to_a__rtt__samples AS n, a_to_b__data_bytes AS up "
        "FROM connections",
    ).iloc[0]
    assert got["id"] == row["id"]
    assert got["retx"] == row["b_to_a.retransmitted_packets"]
    assert got["n"] == row["b_to_a.rtt"]["samples"]
    assert got["up"] == row["a_to_b.data_bytes"]


def test_files_written_take_the_users_umask(tmp_path: Path) -> None:
    """Outputs are 0666 less the umask, as `open()` gives, not a temporary file's 0600:
    the parquet pair and its directory, a plot, a report, a bundle."""
    script = (
        "import os, sys; os.umask(0o022); from airtrace.cli import main; sys.exit(main(sys.argv[1:]))"
    )

    def run(*args: str) -> None:
        done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr

    run("analyze", "--no-progress", "--parquet", str(tmp_path / "pq"), str(SAMPLE))
    run("plot", str(SAMPLE), "--kind", "tsg", "--out", str(tmp_path / "tsg.png"))
    run("report", str(SAMPLE), "--no-findings", "--out", str(tmp_path / "r.html"))
    run("simulate", str(ROOT / "scenarios" / "rais_burst_fixed.toml"), "--out", str(tmp_path / "b"), "--no-progress")
    files = [tmp_path / "pq" / "connections.parquet", tmp_path / "pq" / "packets.parquet", tmp_path / "tsg.png",
             tmp_path / "r.html", *sorted((tmp_path / "b").iterdir())]
    assert {f.name: oct(f.stat().st_mode & 0o777) for f in files} == {f.name: "0o644" for f in files}
    for d in (tmp_path / "pq", tmp_path / "b"):
        assert oct(d.stat().st_mode & 0o777) == "0o755", d


def _documented_packets_columns() -> dict[str, str]:
    """Column → dtype from the table under "## The packets table" in docs/analysis.md."""
    text = (ROOT / "docs" / "analysis.md").read_text()
    section = text.split("\n## The packets table\n", 1)[1].split("\n## ", 1)[0]
    documented: dict[str, str] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        dtype = cells[1].strip("`")
        for name in re.findall(r"`([a-z0-9_]+)`", cells[0]):
            assert name not in documented, f"{name} documented twice"
            documented[name] = dtype
    return documented


@pytest.mark.parametrize("capture", ["sample", "libtrace_10_packets_radiotap.pcap"])
def test_packets_columns_are_documented_with_their_dtypes(capture: str) -> None:
    """docs/analysis.md lists every column of `trace.packets()`, in order, with its
    dtype, on an Ethernet capture and on an 802.11 one."""
    path = SAMPLE if capture == "sample" else CORPUS / capture
    p = airtrace.read(path).packets()
    actual = {name: str(dtype) for name, dtype in p.dtypes.items()}
    documented = _documented_packets_columns()
    assert list(documented) == list(actual)
    assert documented == actual


def test_backoff_is_null_except_for_timer_expiries() -> None:
    """As documented: a timer expiry has its backoff 1, 2, ...; every other packet,
    the go-back-N retransmissions after an expiry too, has null (never 0)."""
    p = airtrace.read(CORPUS / "zeek_206_example_b.pcap").packets(columns=["retrans_kind", "backoff"])
    assert (p["backoff"].dropna() >= 1).all()
    go_back_n = p[(p["retrans_kind"] == "timeout") & p["backoff"].isna()]
    assert len(go_back_n) > 0
    assert p.loc[p["retrans_kind"].isna(), "backoff"].isna().all()


def test_core_stub_matches_the_compiled_module() -> None:
    """python/airtrace/_core.pyi is what the extension really has (mypy's stubtest, as
    pydantic-core runs it), so type checkers and editors see the truth."""
    allowlist = ROOT / ".mypy-stubtest-allowlist"
    done = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "airtrace._core", "--allowlist", str(allowlist)],
        capture_output=True, text=True, cwd=ROOT / "python", env={**os.environ, "MYPYPATH": str(ROOT / "python")},
    )
    assert done.returncode == 0, done.stdout + done.stderr
