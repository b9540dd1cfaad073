"""`Finding`: one finding of the diagnosis, typed, the one shape every view uses.

The Rust diagnosis (crates/airtrace-diagnose, its `Finding`) writes findings as JSON
objects; `Finding.from_dict` turns one into this type, once, and from there everything in
Python takes it as it is: `airtrace.diagnose()` returns them, `Trace.findings` is their
table, `airtrace diagnose` prints them (as text, or as JSON through `to_dict()`, which
gives back the same object key for key and in the same order), and the HTML report shows
them. The findings only bundles can show (header compression, handoffs, route failures)
are built in Python as the same type. docs/diagnosis.md describes each field and kind;
tests/test_finding.py checks that the fields here are the keys the Rust JSON has.

    >>> from airtrace.finding import Finding
    >>> f = Finding.from_dict({"kind": "timeout_backoff", "connection": 1, "direction": "a_to_b",
    ...     "start_s": 13.74, "end_s": 16.01, "cost_s": 2.26, "throughput_share": 0.06,
    ...     "evidence": [2163], "explanation": "...", "fix": "...", "details": {"timeouts": 3.0}})
    >>> f.kind, f.severity, f.title
    ('timeout_backoff', 'problem', 'timeout_backoff — 2.26 s lost (6% of the connection)')
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Mapping


class FindingError(ValueError):
    """An object that is not a finding: the message names the key and what it takes."""


@dataclass(frozen=True)
class Finding:
    """One cause of a slow transfer, with its evidence and its fix (docs/diagnosis.md)."""

    #: The cause: one of the stable kind names (kinds are added, never renamed).
    kind: str
    #: The connection's id, as `airtrace analyze` numbers it (tshark's `tcp.stream`).
    connection: int
    #: The direction of the data concerned: `a_to_b` or `b_to_a`.
    direction: str
    #: Start of the span, seconds from the first packet of the capture.
    start_s: float
    #: End of the span, seconds from the first packet of the capture.
    end_s: float
    #: Transfer time it cost, s (0 when it costs none by itself; see `explains_timeout_s`).
    cost_s: float
    #: `cost_s` over the connection's duration: the share of throughput lost.
    throughput_share: float
    #: Frame numbers (tshark's) of the packets that show it, in capture order, at most 20.
    evidence: tuple[int, ...]
    #: What happened, in plain words.
    explanation: str
    #: What would fix it.
    fix: str
    #: The numbers behind it, by name (e.g. `max_backoff`, `explains_timeout_s`); None
    #: where the Rust JSON has null (a value that is not a number).
    details: Mapping[str, float | None] = field(default_factory=dict)
    #: The input diagnosed, as it was given (a capture file or a bundle directory); None
    #: for a finding read without one (one capture's Rust JSON, `airtrace analyze --json`).
    file: str | None = None

    def __post_init__(self) -> None:
        # Read-only containers: a finding is a value, shared by every view.
        object.__setattr__(self, "evidence", tuple(self.evidence))
        object.__setattr__(self, "details", MappingProxyType(dict(self.details)))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Finding:
        """The finding a JSON object describes (the Rust diagnosis' form, or
        `airtrace diagnose --json`'s, which adds `file`). FindingError names an
        unknown key, a missing one, or a value of the wrong type."""
        if not isinstance(d, Mapping):
            raise FindingError(f"a finding is a JSON object, not {type(d).__name__}")
        names = [f.name for f in fields(cls)]
        unknown = [k for k in d if k not in names]
        if unknown:
            raise FindingError(f"unknown key {unknown[0]!r} (a finding has {', '.join(names)})")
        missing = [n for n in names if n not in d and n not in ("details", "file")]
        if missing:
            raise FindingError(f"no key {missing[0]!r} (a finding has {', '.join(names)})")
        return cls(
            kind=_text(d, "kind"),
            connection=_integer(d["connection"], "connection"),
            direction=_text(d, "direction"),
            start_s=_number(d["start_s"], "start_s"),
            end_s=_number(d["end_s"], "end_s"),
            cost_s=_number(d["cost_s"], "cost_s"),
            throughput_share=_number(d["throughput_share"], "throughput_share"),
            evidence=_frames(d["evidence"]),
            explanation=_text(d, "explanation"),
            fix=_text(d, "fix"),
            details=_details(d.get("details", {})),
            file=None if d.get("file") is None else _text(d, "file"),
        )

    def to_dict(self) -> dict[str, Any]:
        """The finding as the JSON object `airtrace diagnose --json` prints: the Rust
        JSON's keys in the order of their names (the order `airtrace._core.diagnose`
        writes them in, through serde_json's sorted map; `airtrace analyze --json` has
        them in the order of the fields), then `file`, left out when None."""
        fields_ = {
            "kind": self.kind,
            "connection": self.connection,
            "direction": self.direction,
            "start_s": self.start_s,
            "end_s": self.end_s,
            "cost_s": self.cost_s,
            "throughput_share": self.throughput_share,
            "evidence": list(self.evidence),
            "explanation": self.explanation,
            "fix": self.fix,
            "details": dict(self.details),
        }
        out = dict(sorted(fields_.items()))
        if self.file is not None:
            out["file"] = self.file
        return out

    @property
    def explains_timeout_s(self) -> float:
        """The seconds of timeout_backoff's cost this finding explains without counting
        them again (docs/diagnosis.md, `explains_timeout_s`); 0 when none."""
        return float(self.details.get("explains_timeout_s") or 0.0)

    @property
    def low_confidence(self) -> bool:
        """The finding says its own doubt (details `low_confidence` 1)."""
        return bool(self.details.get("low_confidence"))

    @property
    def severity(self) -> str:
        """`problem` when it cost 5 % of the connection or more, `warning` when it cost
        some time, else `info`."""
        return "problem" if self.throughput_share >= 0.05 else "warning" if self.cost_s > 0 else "info"

    @property
    def title(self) -> str:
        """One line: the kind and its direction, and what it cost when it cost time."""
        name = " ".join(filter(None, (self.kind, self.direction)))
        if self.cost_s > 0:
            return f"{name} — {self.cost_s:.2f} s lost ({self.throughput_share:.0%} of the connection)"
        return name


def _text(d: Mapping[str, Any], key: str) -> str:
    if not isinstance(d[key], str):
        raise FindingError(f"{key!r} takes a string, not {d[key]!r:.40}")
    return str(d[key])


def _integer(v: Any, key: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise FindingError(f"{key!r} takes a whole number from 0, not {v!r:.40}")
    return v


def _number(v: Any, key: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise FindingError(f"{key!r} takes a number, not {v!r:.40}")
    return float(v)


def _frames(v: Any) -> tuple[int, ...]:
    if not isinstance(v, (list, tuple)):
        raise FindingError(f"'evidence' takes a list of frame numbers, not {v!r:.40}")
    return tuple(_integer(x, "evidence") for x in v)


def _details(v: Any) -> dict[str, float | None]:
    if not isinstance(v, Mapping) or not all(isinstance(k, str) for k in v):
        raise FindingError(f"'details' takes an object of numbers by name, not {v!r:.40}")
    return {k: None if x is None else _number(x, f"details.{k}") for k, x in v.items()}
