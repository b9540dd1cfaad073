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
import shutil
from typing import Any, Mapping

from airtrace import _core
from airtrace.simulation import ScenarioError, check_seed

#: The longest `max_duration_s`: the emulator counts time in 64-bit nanoseconds.
MAX_DURATION_S = 1e9


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
    """Emulates `scenario` (a TOML file, docs/scenarios.md, or the name of a shipped one:
    `airtrace.data`) and returns its summary.

    The bundle (captures taken by the forwarder, link log, TCP_INFO log, summary.json,
    meta.json with `"source": "emulation"`) is written to `out`, atomically. SIGINT
    and SIGTERM stop the run within about 100 ms, end every process it started, remove
    its namespaces and raise KeyboardInterrupt.
    `command` (an argv list) runs in host a's namespace (198.18.0.1) instead of the
    built-in traffic generator, and the run ends when it exits; `server` starts first
    in host b's (198.18.1.1) and is stopped at the end, with whatever either of them
    started (daemons included: the namespaces contain them). A bad `seed` or `max_duration_s`
    is a ValueError, a `command` or `server` program that does not exist a
    FileNotFoundError, before anything starts.
    """
    check_seed(seed)
    check_max_duration(max_duration_s)
    for what, argv in (("command", command), ("server", server)):
        if argv and shutil.which(argv[0]) is None:
            raise FileNotFoundError(f"{what}: no program {argv[0][:100]!r} (not found, or not executable)")
    try:
        from airtrace.data import resolve

        text = _core.emulate(resolve(scenario, "scenarios"), os.fspath(out), seed, busy_poll, max_duration_s, command, server)
    except PermissionError as e:
        raise EmulationUnsupported(str(e)) from None
    except ValueError as e:
        raise ScenarioError(str(e)) from None
    result: dict[str, Any] = json.loads(text)
    return result


def check_max_duration(seconds: object) -> None:
    """ValueError unless `seconds` is None or a time the emulator can run for: more than
    0, at most MAX_DURATION_S."""
    number = type(seconds) in (int, float)
    if seconds is not None and not (number and 0 < seconds <= MAX_DURATION_S):  # type: ignore[operator]
        raise ValueError(f"max duration {str(seconds)[:40]} s is not a time above 0 and at most 1e9 s")


def cleanup() -> list[tuple[str, list[tuple[int, str]]]]:
    """Removes the namespaces (and devices) left by emulations that were killed, after
    ending the processes still inside them (a user's command or server, and whatever they
    daemonized). Returns (namespace, [(pid, command line), ...]) for each namespace."""
    try:
        removed = _core.emulate_cleanup()
    except PermissionError as e:
        raise EmulationUnsupported(str(e)) from None
    return removed


def summary_text(summary: Mapping[str, Any]) -> str:
    """The per-flow results of an emulated run, as `airtrace emulate` prints them: the
    forwarder's delivery lateness, the user's command and its exit code, a line per flow."""
    t = summary["timing"]
    out = (
        f"scenario {summary['scenario']}: emulated for {summary['end_s']:.3f} s; delivery lateness "
        f"p50 {t['late_p50_ns'] / 1000:.0f} us, p99 {t['late_p99_ns'] / 1000:.0f} us\n"
    )
    if summary.get("command"):
        out += f"command {' '.join(summary['command']['argv'])}: exit code {summary['command']['exit_code']}\n"
    for f in summary["flows"]:
        out += (
            f"{f['name']:<10} {f['app']:<6} {f['cc'] or f['protocol']:<6} {f['bytes_delivered']:>12,} B "
            f"{f['goodput_bps'] / 1000:>10.1f} kbit/s  retx {f['retransmissions']}  RTOs {f['timeouts']}  "
            f"idle {f['idle_s']:.3f} s  "
            f"{'done' if f['finished'] else 'NOT finished'}{'  ' + f['error'] if f.get('error') else ''}\n"
        )
    return out
