"""The results of a sweep on disk, and SQL over them (`airtrace query`).

A sweep's results directory holds:

    sweep.json                    the plan as expanded: its parameters, metrics, reports and columns
    runs/part-NNNNNN-*.parquet    the rows, one per run, written batch by batch
    bundles/ID/                   the runs' bundles, when the plan keeps them
    report.html, report-N.png     the plan's reports

A part is written to a temporary name, synced and renamed (then the directory synced):
a reader, or a sweep resumed after `kill -9`, sees whole parts or none. One sweep at a
time writes a directory (an flock on `.lock`); the temporary files that a killed one
left are removed when the next one takes the lock.

`query` runs DuckDB over the rows as the table `runs`, and over the Parquet files that
`airtrace analyze --parquet` writes as `connections` and `packets`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Callable

from airtrace.atomic import write_atomically, write_bytes_atomically

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


class ResultsError(ValueError):
    """A results directory that cannot be used as asked: one line saying why."""


def schema(columns: list[tuple[str, str]]) -> pa.Schema:
    """The Arrow schema of (name, type) columns, type one of int64, float64, bool, string."""
    import pyarrow as pa

    types = {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(), "string": pa.string()}
    return pa.schema([(name, types[kind]) for name, kind in columns])


class Results:
    """A sweep's results directory, held for writing (see the module docs). Use as a
    context manager: the lock is released on exit."""

    def __init__(self, out: str | os.PathLike[str], meta: dict[str, Any], *, resume: bool) -> None:
        self.root = Path(out)
        self.runs = self.root / "runs"
        self.runs.mkdir(parents=True, exist_ok=True)
        self._lock: BinaryIO = open(self.root / ".lock", "ab")
        try:
            self._take_lock()
            self._check(meta, resume)
        except BaseException:
            self._lock.close()
            raise
        self.schema = schema([(c["name"], c["type"]) for c in meta["columns"]])
        self._next = 1 + max((int(p.name.split("-")[1]) for p in self.runs.glob("part-*.parquet")), default=0)

    def _take_lock(self) -> None:
        import fcntl

        try:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResultsError(f"{self.root}: another sweep is writing here") from None
        for stale in [*self.runs.glob(".part-*.tmp"), *self.root.glob(".sweep.json.*.tmp")]:
            stale.unlink()

    def _check(self, meta: dict[str, Any], resume: bool) -> None:
        """Writes sweep.json, or checks that the one there is of the same plan's columns."""
        path = self.root / "sweep.json"
        if any(self.runs.glob("part-*.parquet")):
            if not resume:
                raise ResultsError(
                    f"{self.root} already holds runs of a sweep: --resume to run only what is missing, "
                    "or give another --out"
                )
            before = json.loads(path.read_text()) if path.is_file() else {}
            if before.get("columns") != meta["columns"]:
                raise ResultsError(f"{self.root} holds a sweep with other columns (another plan): give another --out")
        write_bytes_atomically(path, (json.dumps(meta, indent=2) + "\n").encode())

    def done(self) -> dict[str, bool]:
        """The runs the directory holds: their ids, and whether each failed."""
        import pyarrow.parquet as pq

        done: dict[str, bool] = {}
        for part in sorted(self.runs.glob("part-*.parquet")):
            table = pq.read_table(part, columns=["id", "error"])
            done.update(zip(table["id"].to_pylist(), (e is not None for e in table["error"].to_pylist())))
        return done

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Adds `rows` as one part, atomically."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not rows:
            return
        table = pa.Table.from_pylist(rows, schema=self.schema)
        write_atomically(self.runs / f"part-{self._next:06d}-{os.getpid()}.parquet", lambda f: pq.write_table(table, f))
        self._next += 1

    def __enter__(self) -> Results:
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.close()


def read(out: str | os.PathLike[str]) -> pd.DataFrame:
    """The rows of the results directory `out`, as a DataFrame (no rows: no columns)."""
    import pandas as pd
    import pyarrow.parquet as pq

    parts = sorted((Path(out) / "runs").glob("part-*.parquet"))
    if not parts:
        return pd.DataFrame()
    return pq.ParquetDataset(parts).read().to_pandas()


def _views(root: Path) -> dict[str, str]:
    """The tables `query` shows for `root` and the Parquet they read (a glob)."""
    views = {}
    if any((root / "runs").glob("part-*.parquet")):
        views["runs"] = str(root / "runs" / "part-*.parquet")
    for name in ("connections", "packets"):
        if (root / f"{name}.parquet").is_file():
            views[name] = str(root / f"{name}.parquet")
    return views


def query(results: str | os.PathLike[str], sql: str) -> pd.DataFrame:
    """Runs `sql` (DuckDB's dialect) over the results directory `results`: a sweep's
    rows are the table `runs`; `airtrace analyze --parquet DIR`'s files are
    `connections` and `packets`. Raises ResultsError when there is nothing to query or
    the SQL fails."""
    frame: pd.DataFrame = _answer(results, sql, lambda result: result.df())
    return frame


def rows(results: str | os.PathLike[str], sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """`query`'s answer as column names and rows of Python values (no pandas: what
    `airtrace query` prints, started fast)."""
    answer: tuple[list[str], list[tuple[Any, ...]]] = _answer(
        results, sql, lambda result: ([d[0] for d in result.description], result.fetchall())
    )
    return answer


def _answer(results: str | os.PathLike[str], sql: str, fetch: Callable[[Any], Any]) -> Any:
    """`fetch` of the result of `sql` over the tables of `results` (see `query`)."""
    import duckdb

    root = Path(results)
    views = _views(root)
    if not views:
        raise ResultsError(
            f"{root}: no sweep results (runs/part-*.parquet) and no analyze --parquet output "
            "(connections.parquet, packets.parquet)"
        )
    con = duckdb.connect()
    try:
        for name, glob in views.items():
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet({_sql_string(glob)})")
        return fetch(con.execute(sql))
    except duckdb.Error as e:
        first = str(e).strip().splitlines()[0]
        raise ResultsError(f"{first} (tables: {', '.join(views)})") from None
    finally:
        con.close()


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def text_table(columns: list[str], rows: list[tuple[Any, ...]]) -> str:
    """Rows of a query (`rows`) as aligned text, as `airtrace query` prints them: numbers
    to the right, NULL for a missing value."""
    if not rows:
        return "  ".join(columns) + "\n(no rows)\n"

    def cell(v: object) -> str:
        if v is None:
            return "NULL"
        if isinstance(v, float):
            return f"{v:.10g}"
        return str(v)

    cells = [[cell(v) for v in row] for row in rows]
    numeric = [all(isinstance(row[i], (int, float)) or row[i] is None for row in rows) for i in range(len(columns))]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    line = lambda values: "  ".join(  # noqa: E731
        v.rjust(w) if right else v.ljust(w) for v, w, right in zip(values, widths, numeric)
    ).rstrip()
    return "\n".join([line(columns), *(line(r) for r in cells)]) + "\n"
