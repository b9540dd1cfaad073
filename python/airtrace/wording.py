"""How the texts of airtrace name a connection and write a quantity, one convention for
the `analyze` table (crates/airtrace-report, table.rs), the diagnosis, the plots and the
report (issue 17 item 1):

- a connection is `connection ID (A → B)`, its endpoints in the analysis' order, and
  its directions `a_to_b` and `b_to_a`, the JSON's names; the one its data flows in is
  said as `data b_to_a`;
- rates are in bit/s and times in seconds, with the SI prefix that keeps three digits.

    >>> si(87446.3, "bit/s"), si(0.000697, "s")
    ('87.4 kbit/s', '697 µs')
"""

from __future__ import annotations

from typing import Any

_PREFIXES = ((1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "µ"))


def si(v: Any, unit: str) -> str:
    """`v` in `unit` with its SI prefix, three significant digits; "–" for none (None, NaN)."""
    if v is None or v != v:
        return "–"
    scale, prefix = next(((f, p) for f, p in _PREFIXES if abs(v) >= f), (1.0, ""))
    return f"{v / scale:.3g} {prefix}{unit}"


def data_direction(row: Any) -> str:
    """The direction a connection's data flows in (the larger payload; a tie is a_to_b), of
    a row of `airtrace.read(...).connections`."""
    return "b_to_a" if (row["b_to_a.data_bytes"] or 0) > (row["a_to_b.data_bytes"] or 0) else "a_to_b"


def connection_name(row: Any) -> str:
    """`connection 0 (192.168.72.14:3254 → 65.54.95.206:80), data b_to_a`."""
    return f"connection {row['id']} ({row['a']} → {row['b']}), data {data_direction(row)}"
