"""A bundle's JSON files, read whatever state they are in (docs/bundle.md).

`meta.json` and `summary.json` hold one JSON object each: one that cannot be read is a
BundleError, one line naming the file and the place. The logs (link.jsonl,
tcpstate.jsonl, routes.jsonl) are read line by line: a damaged line (not JSON, not an
object, a field its readers need missing or of the wrong type) is skipped with a
DamagedInput warning naming the file and the line, and the rest is used.

    >>> for record in records("runs/gsm/link.jsonl", LINK_LOG):      # doctest: +SKIP
    ...     print(record["t_ns"], record["kind"])
"""

from __future__ import annotations

import json
import os
import warnings
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    import pandas as pd


class BundleError(ValueError):
    """A file of a bundle cannot be used: the message is one line naming the file and place."""


class DamagedInput(UserWarning):
    """Part of an input was skipped (a damaged line of a log, a capture that cannot be
    read beside the one that can); the rest was used. `airtrace.DamagedInput`, to
    filter: `warnings.simplefilter("error", airtrace.DamagedInput)`."""


#: Damaged lines of one log warned about one by one; any more are counted in one warning.
WARN_LINES = 5

_INT, _NUM, _STR = (int,), (int, float), (str,)
_WHAT = {_INT: "an integer", _NUM: "a number", _STR: "a string"}

#: The fields each log's readers rely on: name -> (JSON types, required); an optional
#: field may be null or absent. `records` keeps any other fields; `frame` has a column
#: per field listed.
Fields = dict[str, tuple[tuple[type, ...], bool]]
LINK_LOG: Fields = {
    "t_ns": (_INT, True),
    "kind": (_STR, True),
    "dir": (_STR, False),  # null in a network's log, whose records name their `node`
    "node": (_STR, False),
    "reason": (_STR, False),
    **{
        name: (_INT, False)
        for name in ("packet", "flow", "ip_id", "frame", "attempt", "bytes", "queue_packets", "fragments")
    },
}
TCP_STATE_LOG: Fields = {
    "t_ns": (_INT, True),
    "flow": (_INT, True),
    **{name: (_NUM, True) for name in ("cwnd", "ssthresh", "srtt_ns", "rto_ns", "in_flight")},
}
ROUTES_LOG: Fields = {"t_ns": (_INT, True), "node": (_STR, True), "event": (_STR, True)}


#: Largest JSON file read (meta.json, summary.json, findings): 64 MiB (a 50-node
#: network's meta.json is tens of kB).
MAX_OBJECT_BYTES = 64 << 20


def read_json(path: str | os.PathLike[str]) -> Any:
    """The JSON value in the file at `path`, read up to MAX_OBJECT_BYTES: a larger or
    endless file is an error, not all of memory. Errors name the file and the place."""
    try:
        with open(path, "rb") as f:
            text = f.read(MAX_OBJECT_BYTES + 1)
        if len(text) > MAX_OBJECT_BYTES:
            raise BundleError(f"{path}: larger than the limit of {MAX_OBJECT_BYTES} bytes")
        return json.loads(text)
    except OSError as e:
        raise BundleError(f"{path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise BundleError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise BundleError(f"{path}: line {e.lineno} column {e.colno}: {e.msg}") from None


def read_object(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON object in the file at `path` (meta.json, summary.json), as `read_json`
    reads it."""
    value = read_json(path)
    if not isinstance(value, dict):
        raise BundleError(f"{path}: not a JSON object")
    return value


def read_meta(bundle: str | os.PathLike[str]) -> dict[str, Any]:
    """The bundle's meta.json."""
    return read_object(os.path.join(bundle, "meta.json"))


def vantage_points(bundle: str | os.PathLike[str], meta: dict[str, Any]) -> dict[str, str]:
    """The captures meta.json lists (`vantage_points`): name -> path."""
    points = meta.get("vantage_points", [])
    where = os.path.join(bundle, "meta.json")
    if not isinstance(points, list):
        raise BundleError(f"{where}: `vantage_points` is not a list")
    caps = {}
    for i, v in enumerate(points):
        if not (isinstance(v, dict) and isinstance(v.get("name"), str) and isinstance(v.get("file"), str)):
            raise BundleError(f"{where}: `vantage_points[{i}]` has no `name` and `file`")
        caps[v["name"]] = os.path.join(bundle, v["file"])
    return caps


def epoch_ns(bundle: str | os.PathLike[str], meta: dict[str, Any]) -> int:
    """meta.json's `clock.epoch_ns`: where the bundle's time 0 is on its captures' clock (0 if not said)."""
    clock = meta.get("clock", {})
    epoch = clock.get("epoch_ns", 0) if isinstance(clock, dict) else None
    if type(epoch) is not int:
        raise BundleError(f"{os.path.join(bundle, 'meta.json')}: `clock.epoch_ns` is not an integer")
    return epoch


def records(path: str | os.PathLike[str], fields: Fields) -> Iterator[dict[str, Any]]:
    """The sound records of the JSON-lines log at `path`, in order; each damaged line is
    skipped with a DamagedInput warning (the first WARN_LINES of them; then one more
    counts the rest)."""
    damaged = 0
    try:
        f = open(path, "rb")
    except OSError as e:
        raise BundleError(f"{path}: {e.strerror}") from None
    with f:
        for n, line in enumerate(f, start=1):
            line = line.rstrip(b"\r\n")
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except UnicodeDecodeError:
                problem: str | None = "not UTF-8 text"
            except json.JSONDecodeError as e:
                problem = f"not JSON at column {e.colno}: {e.msg}"
            else:
                problem = _problem(record, fields)
            if problem is None:
                yield record
                continue
            damaged += 1
            if damaged <= WARN_LINES:
                warnings.warn(f"{path}:{n}: {problem}; line skipped", DamagedInput)
    if damaged > WARN_LINES:
        warnings.warn(f"{path}: {damaged - WARN_LINES} more damaged lines skipped", DamagedInput)


def frame(path: str | os.PathLike[str], fields: Fields) -> pd.DataFrame | None:
    """The sound records of a log as a table: a column per field of `fields`, and `t`,
    seconds; None when there are none."""
    import pandas as pd

    rows = list(records(path, fields))
    if not rows:
        return None
    df = pd.DataFrame.from_records(rows, columns=list(fields))
    df["t"] = df["t_ns"] / 1e9
    return df


def _problem(record: Any, fields: Fields) -> str | None:
    """What makes `record` unusable, or None."""
    if not isinstance(record, dict):
        return "not a JSON object"
    for name, (types, required) in fields.items():
        value = record.get(name)
        if value is None:
            if required:
                return f"no `{name}`"
        elif type(value) not in types or (type(value) is int and not -(2**63) <= value < 2**63):
            return f"`{name}` is not {_WHAT[types]}"
    return None
