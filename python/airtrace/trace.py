"""`airtrace.read()`: one capture file, analysed, as pandas DataFrames built through Arrow."""

from __future__ import annotations

import json
import os
from functools import cached_property
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airtrace import _core, packet_table
from airtrace.packet_table import AnalysisError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


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
        return packet_table.packets(self.capture, columns, progress=self._progress)

    def packets_arrow(self, columns: Sequence[str] | None = None) -> pa.Table:
        """The packets table as a pyarrow Table (`columns` as in `packets()`)."""
        return packet_table.arrow_table(packet_table.arrow_columns(self.capture, columns, progress=self._progress))

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
    frame = packet_table.to_pandas(table)
    frame.index = pd.Index(frame["id"], name="conn")
    return frame


def connection_lines(capture: str | os.PathLike[str] | None) -> dict[int, str]:
    """Per connection of `capture`, a line saying what it carried: its name (`wording`:
    endpoints as `analyze` orders them, the direction of its data), bytes (each counted
    once), duration, goodput, RTT and retransmitted segments of that direction (what
    `airtrace diagnose` says of each connection); {} when the capture cannot be read."""
    from airtrace.wording import connection_name, data_direction, si

    if capture is None:
        return {}
    try:
        conns = read(capture).connections
    except (AnalysisError, OSError):
        return {}
    lines = {}
    for c in conns.to_dict("records"):
        d = data_direction(c)
        rtt = c[f"{d}.rtt"] or {}
        rtt_text = f", RTT {si(rtt['min_s'], 's')}–{si(rtt['max_s'], 's')}" if rtt.get("min_s") is not None else ""
        retx = c[f"{d}.retransmitted_packets"] or 0
        lines[int(c["id"])] = (
            f"{connection_name(c)}: {_bytes(c[f'{d}.unique_bytes'] or 0)} in {c['duration_s']:.2f} s, "
            f"{si(c[f'{d}.goodput_bps'] or 0, 'bit/s')}{rtt_text}, {retx} retransmitted"
        )
    return lines


def _bytes(n: float) -> str:
    """1234567 → "1.23 MB"."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"
