"""`airtrace.simulate`: run a scenario file through the deterministic simulator.

    >>> import airtrace
    >>> summary = airtrace.simulate("scenarios/rais_burst_fixed.toml", out="run1")  # doctest: +SKIP
    >>> summary["flows"][0]["goodput_bps"]                                           # doctest: +SKIP

The run happens in Rust (crates/airtrace-sim); this module only loads the summary.
"""

from __future__ import annotations

import json
import os
from typing import Any

from airtrace import _core


class ScenarioError(ValueError):
    """A scenario file that does not load: the message is `FILE:LINE:COL: what is wrong`."""


def simulate(
    scenario: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    seed: int | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Runs `scenario` (a TOML file, see docs/scenarios.md) and returns its summary.

    With `out`, the bundle (captures, link log, TCP state log, summary.json,
    meta.json) is written there, atomically; a previous bundle there is replaced, and
    anything else there (a directory holding other files, the current directory) is
    refused with OSError before the run starts. Writers into one `out` take turns; the
    last one's bundle stays. `seed` overrides the scenario's seed. The same scenario and
    seed always give the same bundle, byte for byte.

    A signal whose Python handler raises (Ctrl-C: KeyboardInterrupt) stops the run
    within a few tens of milliseconds, removes its partial bundle and raises here.
    """
    try:
        text = _core.simulate(os.fspath(scenario), None if out is None else os.fspath(out), seed, progress)
    except ValueError as e:
        raise ScenarioError(str(e)) from None
    result: dict[str, Any] = json.loads(text)
    return result


def cleanup(directory: str | os.PathLike[str] = ".") -> list[str]:
    """Removes, in `directory`, the partial bundles that killed runs (simulations or
    emulations) left beside the bundles there: `.NAME.partial-PID-N` and
    `.NAME.old-PID-N` whose process is gone and that no run holds. Returns their paths."""
    removed: list[str] = _core.simulate_cleanup(os.fspath(directory))
    return removed
