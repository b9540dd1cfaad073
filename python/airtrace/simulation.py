"""`airtrace.simulate`: run a scenario file through the deterministic simulator.

    >>> import airtrace
    >>> summary = airtrace.simulate("scenarios/rais_burst_fixed.toml", out="run1")  # doctest: +SKIP
    >>> summary = airtrace.simulate("rais_burst_fixed", out="run1")   # the shipped one, from anywhere  # doctest: +SKIP
    >>> summary["flows"][0]["goodput_bps"]                                           # doctest: +SKIP

The run happens in Rust (crates/airtrace-sim); this module only loads the summary.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from airtrace import _core


class ScenarioError(ValueError):
    """A scenario file that does not load: the message is `FILE:LINE:COL: what is wrong`,
    or `FILE: --set KEY=VALUE: what is wrong` for an override it refuses."""


#: The largest seed: seeds are 64-bit unsigned integers.
MAX_SEED = 2**64 - 1


def check_seed(seed: object) -> None:
    """ValueError unless `seed` is None or a seed: an integer from 0 to MAX_SEED."""
    if seed is not None and (type(seed) is not int or not 0 <= seed <= MAX_SEED):
        raise ValueError(f"seed {str(seed)[:40]} is not an integer from 0 to 2**64 - 1")


def overrides(values: Mapping[str, object] | Iterable[str]) -> list[str]:
    """`KEY=VALUE` overrides, as `airtrace simulate --set` takes them, from either such
    strings or a mapping of keys to Python values (str, int, float, bool, lists and
    dicts of them), each written as its TOML value: `{"flow[1].tcp.variant": "reno",
    "link.forward.loss": {"model": "bernoulli", "p": 0.01}}`."""
    if isinstance(values, Mapping):
        return [f"{key}={_toml(value)}" for key, value in values.items()]
    if isinstance(values, str):
        raise TypeError("overrides: give a list of KEY=VALUE strings or a mapping, not one string")
    return list(values)


def _toml(value: object) -> str:
    """`value` as a TOML value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"overrides: {value!r} has no TOML form")


def simulate(
    scenario: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    seed: int | None = None,
    progress: bool = False,
    set: Mapping[str, object] | Iterable[str] = (),
) -> dict[str, Any]:
    """Runs `scenario` (a TOML file, see docs/scenarios.md, or the name of one shipped
    with the package when no such file exists: `airtrace.data`) and returns its summary.

    `set` overrides values of the scenario, as `airtrace simulate --set` does
    (docs/scenarios.md, "Overrides"): `["seed=7", "flow[1].tcp.variant=newreno"]`, or
    `{"seed": 7, "link.forward.loss.p": 0.02}` (see `overrides`). They are checked as
    the file is; the bundle's scenario.toml is the scenario as overridden.

    With `out`, the bundle (captures, link log, TCP state log, summary.json,
    meta.json) is written there, atomically; a previous bundle there is replaced, and
    anything else there (a directory holding other files, the current directory) is
    refused with OSError before the run starts. Writers into one `out` take turns; the
    last one's bundle stays. `seed` overrides the scenario's seed. The same scenario and
    seed always give the same bundle, byte for byte.

    A signal whose Python handler raises (Ctrl-C: KeyboardInterrupt) stops the run
    within a few tens of milliseconds, removes its partial bundle and raises here.
    """
    from airtrace.data import resolve

    check_seed(seed)
    try:
        text = _core.simulate(
            resolve(scenario, "scenarios"), None if out is None else os.fspath(out), seed, progress, overrides(set)
        )
    except ValueError as e:  # UnknownExample too
        raise ScenarioError(str(e)) from None
    result: dict[str, Any] = json.loads(text)
    return result


def cleanup(directory: str | os.PathLike[str] = ".") -> list[str]:
    """Removes, in `directory`, the partial bundles that killed runs (simulations or
    emulations) left beside the bundles there: `.NAME.partial-PID-N` and
    `.NAME.old-PID-N` whose process is gone and that no run holds. Returns their paths."""
    removed: list[str] = _core.simulate_cleanup(os.fspath(directory))
    return removed


def summary_table(summary: Mapping[str, Any]) -> str:
    """The per-flow results of a simulation as a small text table (also written by
    `summary_table` in crates/airtrace-cli/src/simulate.rs)."""
    head = f"scenario {summary['scenario']}, seed {summary['seed']}: {summary['end_s']:.3f} s simulated, "
    head += f"{summary['events']:,} events\n"
    cols = ("flow", "app", "bytes", "goodput kbit/s", "retx", "RTOs", "fast retx", "idle s", "done")
    rows = [
        (
            f["name"],
            f["app"],
            f"{f['bytes_delivered']:,}",
            f"{f['goodput_bps'] / 1000:.1f}",
            str(f["retransmissions"]),
            str(f["timeouts"]),
            str(f["fast_retransmits"]),
            f"{f['idle_s']:.3f}",
            "yes" if f["finished"] else "no",
        )
        for f in summary["flows"]
    ]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    line = lambda cells: "  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))  # noqa: E731
    return head + "\n".join([line(cols), *(line(r) for r in rows)]) + "\n"
