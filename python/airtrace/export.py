"""Parquet export of the connections and packets tables (`airtrace analyze --parquet`):
the pair is published together (atomic.publish_together), so a reader never sees half
a file or a new connections table beside an old packets table.

The files' column names are those of `Trace.connections` and `Trace.packets()` made
plain SQL identifiers (`sql_columns`), so that DuckDB and other SQL engines take them
unquoted: `a_to_b.retransmitted_packets` is `a_to_b__retransmitted_packets`, the RTT
statistics `a_to_b__rtt__min_s` and so on (a dot becomes two underscores, the nesting
undone), and the packets' `window`, a reserved word in SQL, is `window_size` (the name
tshark gives the scaled window, `tcp.window_size`). docs/analysis.md lists them.

Captures are analysed where airtrace.workers puts them (this process, every core, or a
Dask cluster), and their rows are written in the order the captures were given, so the
tables do not depend on where they were made. The packets table is written as the
captures come back, one row group or more per capture: thousands of captures never sit
in memory at once.

Progress (`write_parquet(progress=stream)`) is one bar over the job (airtrace.progress):
the bytes of every capture, once per pass (twice with the JSON report, whose findings
take a second pass), moved through as each capture is analysed (byte by byte when
this process analyses it, a capture at a time when workers do), labelled with the
phase: analysing, diagnosing, building the tables of, writing the packets of a capture,
then writing the connections table.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TextIO

from airtrace import workers
from airtrace.atomic import publish_together, write_atomically

if TYPE_CHECKING:
    import pyarrow as pa

#: The files `write_parquet` makes.
PAIR = ("connections.parquet", "packets.parquet")

#: What a file under a directory given to `captures_in` must end with to be read.
CAPTURE_SUFFIXES = tuple(f"{s}{gz}" for s in (".pcap", ".pcapng", ".cap", ".dmp") for gz in ("", ".gz"))


def captures_in(inputs: Iterable[str]) -> list[str]:
    """The capture files `inputs` name: a file as it is; a directory, the captures under
    it (any depth; names ending in one of CAPTURE_SUFFIXES), sorted; a pattern with `*`,
    `?` or `[`, the files it matches (`**` for any depth), sorted. Raises ValueError
    naming a directory or pattern that gives none."""
    found: list[str] = []
    for given in inputs:
        if os.path.isdir(given):
            under = sorted(
                os.path.join(root, name)
                for root, _, names in os.walk(given)
                for name in names
                if name.lower().endswith(CAPTURE_SUFFIXES)
            )
            if not under:
                raise ValueError(f"{given}: a directory holding no capture ({', '.join(CAPTURE_SUFFIXES)})")
            found += under
        elif glob.has_magic(given) and not os.path.exists(given):
            matched = sorted(p for p in glob.glob(given, recursive=True) if os.path.isfile(p))
            if not matched:
                raise ValueError(f"{given}: no file matches")
            found += matched
        else:
            found.append(given)
    return found


#: Column names SQL reserves, and what the Parquet files call those columns instead.
SQL_RESERVED = {"window": "window_size"}


def sql_columns(table: pa.Table) -> pa.Table:
    """`table` with no struct column left (each field its own column, at any depth) and
    every name a plain SQL identifier: a dot of a flattened name becomes `__`, a name in
    SQL_RESERVED its replacement. Raises ValueError if two columns would share a name."""
    import pyarrow.types

    while any(pyarrow.types.is_struct(field.type) for field in table.schema):
        table = table.flatten()
    names = [SQL_RESERVED.get(name, name.replace(".", "__")) for name in table.column_names]
    if len(set(names)) != len(names):
        raise ValueError(f"two columns would share a name in Parquet: {sorted(n for n in names if names.count(n) > 1)}")
    return table.rename_columns(names)


class NothingToWrite(ValueError):
    """No capture could be read: no tables were written."""


@dataclass
class Analysed:
    """One capture as a worker gives it back: what to print and its two tables."""

    path: str
    #: Why nothing could be read (then the rest is empty).
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    #: The summary table, or the report as JSON (with findings), as the command prints it.
    text: str = ""
    connections: pa.Table | None = None
    packets: pa.Table | None = None


#: What `analysed` reports as it goes: the phase, and the bytes done of the capture's
#: share of the bar (its size once per pass).
Report = Callable[[str, int], object]


def analysed(path: str, as_json: bool = False, report: Report | None = None) -> Analysed:
    """Analyses one capture for `write_parquet` (runs in a worker): one pass gives its
    table, connections and packets; with `as_json`, a second gives the report with its
    findings. `report` (in this process only) hears how far it is."""
    import json

    import pyarrow as pa

    from airtrace import _core
    from airtrace.packet_table import arrow_table, taken_columns
    from airtrace.trace import connections_frame

    def passing(what: str, before: int) -> Callable[[int, int | None], object] | None:
        return None if report is None else lambda pos, _size: report(what, before + pos)

    size = _size(path)
    try:
        analysis = _core.analyze(path, packets=True, table=not as_json, on_progress=passing("analysing", 0))
        shown = _core.analyze(path, findings=True, on_progress=passing("diagnosing", size)) if as_json else analysis
    except ValueError as e:
        return Analysed(path, error=str(e))
    assert analysis.packets is not None
    if report is not None:
        report("building the tables of", size * passes(as_json))
    connections = sql_columns(pa.Table.from_pandas(connections_frame(json.loads(analysis.json)), preserve_index=False))
    packets = sql_columns(arrow_table(taken_columns(analysis.packets, None)))
    warnings = [*shown.warnings]
    if shown.error:
        warnings.append(f"{shown.error} (analysed the {shown.frames} frames before it)")
    text = shown.json if as_json else (analysis.table or "")
    return Analysed(
        path,
        warnings=warnings,
        text=text,
        connections=connections.add_column(0, "file", pa.array([path] * connections.num_rows, pa.string())),
        packets=packets.add_column(0, "file", pa.array([path] * packets.num_rows, pa.string())),
    )


def passes(as_json: bool) -> int:
    """Passes over each capture: the packets, and the findings for the JSON report."""
    return 2 if as_json else 1


def _size(path: str) -> int:
    """The file's size, 0 when it cannot be had (its analysis then says why)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def write_parquet(
    paths: list[str],
    out_dir: str,
    *,
    as_json: bool = False,
    on_file: Callable[[Analysed], object] = lambda _: None,
    jobs: int | None = 1,
    scheduler: str | None = None,
    cluster: str | None = None,
    progress: TextIO | None = None,
) -> list[str]:
    """Write DIR/connections.parquet and DIR/packets.parquet for the given captures.

    Each table gets a `file` column naming the capture. Both files are new, or neither
    is (an existing DIR is replaced only if it holds nothing else; see
    atomic.publish_together). `on_file` sees each capture's `Analysed` in the order
    given (a capture that cannot be read has its `error` and adds no rows). Captures
    are analysed on `jobs` processes (None: every core), at the Dask `scheduler`, or on
    a LocalCluster (`cluster="local"`). With `progress`, one bar on that stream follows
    the whole job (see the module's doc). Returns the two paths; raises NothingToWrite
    if no capture could be read (then nothing is written)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from airtrace.progress import Bar

    sizes = [_size(p) * passes(as_json) for p in paths]
    bar = Bar(sum(sizes), progress)
    taken = {"files": 0, "bytes": 0}  # the captures whose results were taken, and their share

    def where(path: str) -> str:
        return f"{os.path.basename(path)} ({taken['files'] + 1}/{len(paths)})"

    def analysed_here(path: str) -> Analysed:
        """`analysed` in this process, moving the bar through the capture's share."""

        def report(what: str, done: int) -> None:
            bar.phase(f"{what} {where(path)}")
            bar.to(taken["bytes"] + done)

        return analysed(path, as_json, report)

    if workers.in_process(len(paths), jobs=jobs, scheduler=scheduler, cluster=cluster):
        fn: Callable[[str], Analysed] = analysed_here
    else:
        fn = _analysed_json if as_json else analysed
        bar.phase(f"analysing {len(paths)} captures")

    def write(stage: Path) -> None:
        connections: list[pa.Table] = []

        def stream_packets(f: BinaryIO) -> None:
            packets: pq.ParquetWriter | None = None
            try:
                with workers.ordered_map(fn, paths, jobs=jobs, scheduler=scheduler, cluster=cluster) as results:
                    for one in results:
                        bar.phase(f"writing the packets of {where(one.path)}")
                        with bar.suspended():
                            on_file(one)
                        taken["files"] += 1
                        taken["bytes"] += sizes[taken["files"] - 1]
                        bar.to(taken["bytes"])
                        if one.packets is None or one.connections is None:
                            continue
                        connections.append(one.connections)
                        if packets is None:
                            packets = pq.ParquetWriter(f, one.packets.schema)
                        table = one.packets
                        if not table.schema.equals(packets.schema):
                            table = table.cast(packets.schema)
                        packets.write_table(table)
            finally:
                if packets is not None:
                    packets.close()

        write_atomically(stage / PAIR[1], stream_packets)
        if not connections:
            raise NothingToWrite("no capture could be read: nothing written")
        bar.phase("writing the connections table")
        table = pa.concat_tables(connections, promote_options="permissive")
        write_atomically(stage / PAIR[0], lambda f: pq.write_table(table, f))

    try:
        publish_together(Path(out_dir), PAIR, write)
    finally:
        bar.close()
    return [os.path.join(out_dir, name) for name in PAIR]


def _analysed_json(path: str) -> Analysed:
    """`analysed` with the report as JSON (a module-level function, so that workers can
    be sent it)."""
    return analysed(path, as_json=True)
