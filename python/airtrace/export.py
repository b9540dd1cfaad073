"""Parquet export of the connections and packets tables (written atomically)."""

from __future__ import annotations

import os
from pathlib import Path

from airtrace.dataset import write_atomically


def write_parquet(paths: list[str], out_dir: str, *, progress: bool = False) -> list[str]:
    """Write DIR/connections.parquet and DIR/packets.parquet for the given captures.

    Each table gets a `file` column naming the capture. Files are written
    atomically (dataset.write_atomically), so a reader never sees half a file.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from airtrace.trace import Trace

    os.makedirs(out_dir, exist_ok=True)
    conn_tables, packet_tables = [], []
    for path in paths:
        trace = Trace(path, progress=progress)
        conns = pa.Table.from_pandas(trace.connections, preserve_index=False)
        packets = trace.packets_arrow()
        conn_tables.append(conns.add_column(0, "file", pa.array([path] * conns.num_rows, pa.string())))
        packet_tables.append(packets.add_column(0, "file", pa.array([path] * packets.num_rows, pa.string())))
    written = []
    for name, tables in (("connections", conn_tables), ("packets", packet_tables)):
        table = pa.concat_tables(tables, promote_options="permissive")
        final = Path(out_dir) / f"{name}.parquet"
        write_atomically(final, lambda f: pq.write_table(table, f))
        written.append(str(final))
    return written
