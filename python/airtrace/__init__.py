"""airtrace: find out why TCP is slow over a wireless link.

    >>> import airtrace
    >>> trace = airtrace.read("capture.pcapng")        # doctest: +SKIP
    >>> trace.connections                               # doctest: +SKIP
    >>> trace.packets()[lambda p: p.retransmission]     # doctest: +SKIP

    >>> airtrace.simulate("rais_burst_fixed", out="run1")     # doctest: +SKIP
    >>> airtrace.sweep("mathis", "results/mathis")             # doctest: +SKIP
    >>> airtrace.example("sample-sender.pcapng")               # doctest: +SKIP

Scenarios and plans are files, or the names of those shipped with the package
(`airtrace.data`, which `airtrace.example` finds and copies).

This module stays light so that the command line starts fast: `read`, `simulate`
and the rest are loaded on first use, and pandas and pyarrow only when a table
is built.
"""

from __future__ import annotations

from airtrace._core import __version__

__all__ = [
    "AnalysisError",
    "DamagedInput",
    "DiagnosisError",
    "Finding",
    "PlanError",
    "ScenarioError",
    "Trace",
    "data",
    "diagnose",
    "emulate",
    "example",
    "query",
    "read",
    "simulate",
    "sweep",
    "__version__",
]


def __dir__() -> list[str]:
    """The public API, the names loaded on first use included: what `dir(airtrace)` and
    tab completion show."""
    return sorted(__all__)


def __getattr__(name: str) -> object:
    if name in ("AnalysisError", "Trace", "read"):
        from airtrace import trace

        return getattr(trace, name)
    if name in ("diagnose", "DiagnosisError"):
        from airtrace import diagnosis

        return getattr(diagnosis, name)
    if name == "Finding":
        from airtrace import finding

        return finding.Finding
    if name in ("simulate", "ScenarioError"):
        from airtrace import simulation

        return getattr(simulation, name)
    if name in ("sweep", "PlanError"):
        from airtrace import sweeps

        return getattr(sweeps, name)
    if name in ("data", "example"):
        import importlib  # not `from airtrace import data`: that asks this hook for `data` again

        data = importlib.import_module("airtrace.data")
        return data if name == "data" else data.example
    if name == "DamagedInput":
        from airtrace import bundlefiles

        return bundlefiles.DamagedInput
    if name == "query":
        from airtrace import dataset

        return dataset.query
    if name == "emulate":
        from airtrace import emulation

        return emulation.emulate
    raise AttributeError(f"module 'airtrace' has no attribute {name!r}")
