"""`airtrace.read()`: one capture file, analysed, as pandas DataFrames built through Arrow."""

from __future__ import annotations

import json
import os
from functools import cached_property
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from airtrace import _core

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


class AnalysisError(Exception):
    """Nothing could be read from a capture; the message is one line naming the file and place."""


def read(path: str | os.PathLike[str], *, progress: bool = False) -> Trace:
    """Analyse the capture at `path` (pcap, pcapng, gzip-compressed or not), or a
    simulation bundle's main capture, the one `airtrace diagnose BUNDLE` reads (its
    sender's, else link_in's or receiver's; `Trace.capture` names it). `findings` are
    then the bundle's, as `airtrace diagnose` gives them.

    Raises AnalysisError when nothing can be read. Problems after the first frames
    (a truncated tail, frames cut short) are in `Trace.warnings` and `Trace.error`.
    """
    return Trace(os.fspath(path), progress=progress)


class Trace:
    """The analysis of one capture file.

    - `connections`: one row per TCP connection (columns `a_to_b.*` and `b_to_a.*`
      per direction), see docs/json-schema.md for every field; indexed by `conn`, the
      connection's `id`, as the packets table's `conn` column names it.
    - `packets()`: one row per captured frame, `frame` numbered as tshark numbers
      frames, one boolean column per annotation named as Wireshark names the flag.
    - `findings`: the diagnosis, one row per finding (docs/diagnosis.md).
    """

    def __init__(self, path: str, *, progress: bool = False) -> None:
        self.path = self.capture = path
        self._progress = progress
        if os.path.isdir(path):
            from airtrace.diagnosis import DiagnosisError, diagnosed_capture

            try:
                self.capture = os.fspath(diagnosed_capture(path))
            except DiagnosisError as e:
                raise AnalysisError(str(e)) from None
        try:
            analysis = _core.analyze(self.capture, packets=False, progress=progress)
        except ValueError as e:
            raise AnalysisError(str(e)) from None
        self.report: dict[str, Any] = json.loads(analysis.json)

    @property
    def frames(self) -> int:
        return int(self.report["frames"])

    @property
    def warnings(self) -> list[str]:
        return list(self.report["warnings"])

    @property
    def error(self) -> str | None:
        return self.report["error"]

    @cached_property
    def connections(self) -> pd.DataFrame:
        return connections_frame(self.report)

    @cached_property
    def findings(self) -> pd.DataFrame:
        """The diagnosis: one row per finding, a column per field of
        `airtrace.finding.Finding` (kind, connection, direction, start_s, end_s, cost_s,
        throughput_share, evidence, explanation, fix, details, file); see
        docs/diagnosis.md. Analyses the file again; `airtrace.diagnose(path)` gives the
        typed findings themselves."""
        from airtrace.diagnosis import diagnose, findings_frame

        return findings_frame(diagnose(self.path))

    def packets(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The packets table (analyses the file again, keeping every row); `columns`
        keeps only those, in that order.

        The table comes from Rust one column at a time, and each column is turned into
        its pandas form and let go before the next is taken, so the peak memory is
        about the DataFrame's own size (docs/reliability.md)."""
        import pandas as pd

        arrays = {name: _pandas_array(array) for name, array in self._arrow_columns(columns)}
        return pd.DataFrame(arrays, copy=False)

    def packets_arrow(self, columns: Sequence[str] | None = None) -> pa.Table:
        """The packets table as a pyarrow Table (`columns` as in `packets()`)."""
        import pyarrow as pa

        return arrow_table(self._arrow_columns(columns))

    def _arrow_columns(self, columns: Sequence[str] | None) -> Iterator[tuple[str, pa.Array]]:
        """(name, Arrow array) of each column of the packets table, or of `columns` in
        their order, taken from Rust one by one."""
        try:
            analysis = _core.analyze(self.capture, packets=True, progress=self._progress)
        except ValueError as e:
            raise AnalysisError(str(e)) from None
        table = analysis.packets
        assert table is not None
        del analysis
        return taken_columns(table, columns)

    def __repr__(self) -> str:
        return f"<airtrace.Trace {self.path!r}: {self.frames} frames, {len(self.report['connections'])} TCP connections>"


def connections_frame(report: dict[str, Any]) -> pd.DataFrame:
    """The connections of an analysis report (its JSON, parsed) as `Trace.connections`
    gives them: one row per connection, `a_to_b.*` and `b_to_a.*` columns, the index
    named `conn` (the packets table's name for the `id`), so that no column and the
    index share a name (`reset_index()`, `query()`) and the packets join on it."""
    import pandas as pd
    import pyarrow as pa

    conns = report["connections"]
    if not conns:
        table = pa.table({"id": pa.array([], pa.uint32())})
    else:
        table = pa.Table.from_struct_array(pa.array(conns)).flatten()
    frame = _to_pandas(table)
    frame.index = pd.Index(frame["id"], name="conn")
    return frame


def connection_lines(capture: str | os.PathLike[str] | None) -> dict[int, str]:
    """Per connection of `capture`, a line saying what it carried: endpoints, bytes
    (each counted once), duration, goodput, RTT and retransmitted segments of its main
    direction of data (what `airtrace diagnose` says of each connection); {} when the
    capture cannot be read."""
    if capture is None:
        return {}
    try:
        conns = read(capture).connections
    except (AnalysisError, OSError):
        return {}
    lines = {}
    for c in conns.to_dict("records"):
        d = "b_to_a" if (c["b_to_a.data_bytes"] or 0) > (c["a_to_b.data_bytes"] or 0) else "a_to_b"
        src, dst = (c["a"], c["b"]) if d == "a_to_b" else (c["b"], c["a"])
        rtt = c[f"{d}.rtt"] or {}
        rtt_text = (
            f", RTT {rtt['min_s'] * 1e3:.0f}–{rtt['max_s'] * 1e3:.0f} ms" if rtt.get("min_s") is not None else ""
        )
        retx = c[f"{d}.retransmitted_packets"] or 0
        lines[int(c["id"])] = (
            f"connection {c['id']} ({src} → {dst}): {_bytes(c[f'{d}.unique_bytes'] or 0)} in {c['duration_s']:.2f} s, "
            f"{(c[f'{d}.goodput_bps'] or 0) / 1e6:.3g} Mbit/s{rtt_text}, {retx} retransmitted"
        )
    return lines


def _bytes(n: float) -> str:
    """1234567 → "1.23 MB"."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def arrow_table(columns: Iterator[tuple[str, pa.Array]]) -> pa.Table:
    """A pyarrow Table of (name, array) columns."""
    import pyarrow as pa

    names, arrays = [], []
    for name, array in columns:
        names.append(name)
        arrays.append(array)
    return pa.table(arrays, names=names)


def taken_columns(table: _core.PacketTable, columns: Sequence[str] | None) -> Iterator[tuple[str, pa.Array]]:
    """(name, Arrow array) of each column of `table`, or of `columns` in their order,
    taken from Rust one by one."""
    if columns is None:
        while (column := table.take()) is not None:
            yield column[0], _arrow_array(column, table.rows)
        return
    wanted = list(columns)
    unknown = [c for c in wanted if c not in table.names]
    if unknown or len(set(wanted)) != len(wanted):
        what = f"unknown column {unknown[0]!r}" if unknown else "a column named twice"
        raise ValueError(f"packets(columns=...): {what}; the columns are: {', '.join(table.names)}")
    kept = {}
    while (column := table.take()) is not None:
        if column[0] in wanted:
            kept[column[0]] = _arrow_array(column, table.rows)
    for name in wanted:
        yield name, kept.pop(name)


_ARROW_TYPES = {
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64", "i8": "int8", "i64": "int64",
    "f64": "float64", "bool": "bool_", "dict": "uint32",
}


def _arrow_array(column: _core.Column, rows: int) -> pa.Array:
    """One column from Rust as an Arrow array over its buffers (no copy)."""
    import pyarrow as pa

    _, kind, data, validity, dictionary = column
    arrow_type = pa.timestamp("ns", tz="UTC") if kind == "ts_ns" else getattr(pa, _ARROW_TYPES[kind])()
    valid = pa.py_buffer(validity) if validity is not None else None
    array = pa.Array.from_buffers(arrow_type, rows, [valid, pa.py_buffer(data)])
    if kind == "dict":
        array = pa.DictionaryArray.from_arrays(array, pa.array(dictionary or [], pa.string()))
    return array


def _pandas_array(array: pa.Array) -> Any:
    """One Arrow column in the pandas form `_to_pandas` gives it."""
    import pyarrow as pa

    return _to_pandas(pa.table([array], names=["column"]))["column"].array


def _to_pandas(table: pa.Table) -> pd.DataFrame:
    import pandas as pd
    import pyarrow as pa

    nullable = {
        pa.uint8(): pd.UInt8Dtype(), pa.uint16(): pd.UInt16Dtype(), pa.uint32(): pd.UInt32Dtype(),
        pa.uint64(): pd.UInt64Dtype(), pa.int8(): pd.Int8Dtype(), pa.int64(): pd.Int64Dtype(),
    }
    return table.to_pandas(types_mapper=nullable.get)
