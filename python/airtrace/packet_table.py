"""The packets table of one capture: from Rust one column at a time, as Arrow or pandas.

`Trace.packets()` (airtrace.trace) and the diagnosis of bundles (airtrace.diagnosis,
which matches evidence frames across a bundle's captures) read it here; the columns
are documented in docs/analysis.md. Each column is turned into its pandas form and
let go before the next is taken, so the peak memory is about the DataFrame's own size
(docs/reliability.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from airtrace import _core

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


class AnalysisError(Exception):
    """Nothing could be read from a capture; the message is one line naming the file and place."""


def packets(capture: str | os.PathLike[str], columns: Sequence[str] | None = None, *, progress: bool = False) -> pd.DataFrame:
    """The packets table of the capture file `capture` as a pandas DataFrame; `columns`
    keeps only those, in that order. AnalysisError when nothing can be read."""
    import pandas as pd

    arrays = {name: _pandas_array(array) for name, array in arrow_columns(capture, columns, progress=progress)}
    return pd.DataFrame(arrays, copy=False)


def arrow_columns(
    capture: str | os.PathLike[str], columns: Sequence[str] | None = None, *, progress: bool = False
) -> Iterator[tuple[str, pa.Array]]:
    """(name, Arrow array) of each column of the packets table of `capture`, or of
    `columns` in their order, taken from Rust one by one."""
    try:
        analysis = _core.analyze(os.fspath(capture), packets=True, progress=progress)
    except ValueError as e:
        raise AnalysisError(str(e)) from None
    table = analysis.packets
    assert table is not None
    del analysis
    return taken_columns(table, columns)


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
    """One Arrow column in the pandas form `to_pandas` gives it."""
    import pyarrow as pa

    return to_pandas(pa.table([array], names=["column"]))["column"].array


def to_pandas(table: pa.Table) -> pd.DataFrame:
    import pandas as pd
    import pyarrow as pa

    nullable = {
        pa.uint8(): pd.UInt8Dtype(), pa.uint16(): pd.UInt16Dtype(), pa.uint32(): pd.UInt32Dtype(),
        pa.uint64(): pd.UInt64Dtype(), pa.int8(): pd.Int8Dtype(), pa.int64(): pd.Int64Dtype(),
    }
    return table.to_pandas(types_mapper=nullable.get)
