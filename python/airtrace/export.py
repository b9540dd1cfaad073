"""Parquet export of the connections and packets tables: the pair is published
together (atomic.publish_together), so a reader never sees half a file or a new
connections table beside an old packets table."""

from __future__ import annotations

import os
from pathlib import Path

from airtrace.atomic import publish_together, write_atomically

#: The files `write_parquet` makes.
PAIR = ("connections.parquet", "packets.parquet")


def write_parquet(paths: list[str], out_dir: str, *, progress: bool = False) -> list[str]:
    """Write DIR/connections.parquet and DIR/packets.parquet for the given captures.

    Each table gets a `file` column naming the capture. Both files are new, or neither
    is (an existing DIR is replaced only if it holds nothing else; see
    atomic.publish_together). Returns their paths."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from airtrace.trace import Trace

    conn_tables, packet_tables = [], []
    for path in paths:
        trace = Trace(path, progress=progress)
        conns = pa.Table.from_pandas(trace.connections, preserve_index=False)
        packets = trace.packets_arrow()
        conn_tables.append(conns.add_column(0, "file", pa.array([path] * conns.num_rows, pa.string())))
        packet_tables.append(packets.add_column(0, "file", pa.array([path] * packets.num_rows, pa.string())))

    def write(stage: Path) -> None:
        for name, tables in zip(PAIR, (conn_tables, packet_tables)):
            table = pa.concat_tables(tables, promote_options="permissive")
            write_atomically(stage / name, lambda f: pq.write_table(table, f))

    publish_together(Path(out_dir), PAIR, write)
    return [os.path.join(out_dir, name) for name in PAIR]
