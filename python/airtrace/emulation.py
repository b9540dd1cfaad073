"""`airtrace.emulate`: real Linux TCP through a scenario's link, in real time.

    >>> import airtrace
    >>> summary = airtrace.emulate("scenarios/emu_agreement.toml", out="run1")  # doctest: +SKIP
    >>> summary["flows"][0]["goodput_bps"]                                       # doctest: +SKIP

Needs root (network namespaces, TUN devices). The run happens in Rust
(crates/airtrace-emu, docs/emulator.md); this module only loads the summary.
"""

from __future__ import annotations

import json
import os
from typing import Any

from airtrace import _core
from airtrace.simulation import ScenarioError


class EmulationUnsupported(PermissionError):
    """Not root, no CAP_NET_ADMIN, or no /dev/net/tun: the message says which."""


def emulate(
    scenario: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    seed: int | None = None,
    busy_poll: bool = False,
    max_duration_s: float | None = None,
    command: list[str] | None = None,
    server: list[str] | None = None,
) -> dict[str, Any]:
    """Emulates `scenario` (a TOML file, docs/scenarios.md) and returns its summary.

    The bundle (captures taken by the forwarder, link log, TCP_INFO log, summary.json,
    meta.json with `"source": "emulation"`) is written to `out`, atomically. SIGINT
    and SIGTERM stop the run, remove its namespaces and raise KeyboardInterrupt.
    `command` (an argv list) runs in host a's namespace (198.18.0.1) instead of the
    built-in traffic generator, and the run ends when it exits; `server` starts first
    in host b's (198.18.1.1) and is stopped at the end.
    """
    try:
        text = _core.emulate(os.fspath(scenario), os.fspath(out), seed, busy_poll, max_duration_s, command, server)
    except PermissionError as e:
        raise EmulationUnsupported(str(e)) from None
    except ValueError as e:
        raise ScenarioError(str(e)) from None
    result: dict[str, Any] = json.loads(text)
    return result


def cleanup() -> list[str]:
    """Removes the namespaces (and devices) left by emulations that were killed."""
    try:
        removed: list[str] = _core.emulate_cleanup()
    except PermissionError as e:
        raise EmulationUnsupported(str(e)) from None
    return removed
