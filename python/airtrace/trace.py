"""`airtrace.read()`: one capture file, analysed, as pandas DataFrames built through Arrow."""

from __future__ import annotations

import json
import os
from functools import cached_property
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
      per direction), see docs/json-schema.md for every field.
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
        import pyarrow as pa

        conns = self.report["connections"]
        if not conns:
            return _to_pandas(pa.table({"id": pa.array([], pa.uint32())}))
        table = pa.Table.from_struct_array(pa.array(conns)).flatten()
        return _to_pandas(table).set_index("id", drop=False)

    @cached_property
    def findings(self) -> pd.DataFrame:
        """The diagnosis: one row per finding (kind, connection, direction, start_s,
        end_s, cost_s, throughput_share, evidence, explanation, fix, details); see
        docs/diagnosis.md. Analyses the file again."""
        from airtrace.diagnosis import diagnose, findings_frame

        return findings_frame(diagnose(self.path))

    def packets(self) -> pd.DataFrame:
        """The packets table (analyses the file again, keeping every row)."""
        return _to_pandas(self.packets_arrow())

    def packets_arrow(self) -> pa.Table:
        """The packets table as a pyarrow Table."""
        try:
            analysis = _core.analyze(self.capture, packets=True, progress=self._progress)
        except ValueError as e:
            raise AnalysisError(str(e)) from None
        assert analysis.columns is not None
        return _columns_to_table(analysis.columns)

    def __repr__(self) -> str:
        return f"<airtrace.Trace {self.path!r}: {self.frames} frames, {len(self.report['connections'])} TCP connections>"


def _columns_to_table(cols: list[_core.Column]) -> pa.Table:
    import pyarrow as pa

    types = {
        "u8": pa.uint8(), "u16": pa.uint16(), "u32": pa.uint32(), "u64": pa.uint64(),
        "i8": pa.int8(), "i64": pa.int64(), "f64": pa.float64(), "bool": pa.bool_(),
        "ts_ns": pa.timestamp("ns", tz="UTC"), "dict": pa.uint32(),
    }
    width = {"u8": 1, "i8": 1, "u16": 2, "u32": 4, "dict": 4, "u64": 8, "i64": 8, "f64": 8, "ts_ns": 8}
    rows = len(cols[0][2]) // width[cols[0][1]] if cols else 0
    arrays, names = [], []
    for name, kind, data, validity, dictionary in cols:
        valid = pa.py_buffer(validity) if validity is not None else None
        arr = pa.Array.from_buffers(types[kind], rows, [valid, pa.py_buffer(data)])
        if kind == "dict":
            arr = pa.DictionaryArray.from_arrays(arr, pa.array(dictionary or [], pa.string()))
        arrays.append(arr)
        names.append(name)
    return pa.table(arrays, names=names)


def _to_pandas(table: pa.Table) -> pd.DataFrame:
    import pandas as pd
    import pyarrow as pa

    nullable = {
        pa.uint8(): pd.UInt8Dtype(), pa.uint16(): pd.UInt16Dtype(), pa.uint32(): pd.UInt32Dtype(),
        pa.uint64(): pd.UInt64Dtype(), pa.int8(): pd.Int8Dtype(), pa.int64(): pd.Int64Dtype(),
    }
    return table.to_pandas(types_mapper=nullable.get)
