"""Type stubs of the compiled module airtrace._core (crates/airtrace-py), checked against
the built module by mypy's stubtest (tests/test_scripting.py; the exceptions, each
justified, in .mypy-stubtest-allowlist)."""

from typing import Callable, final

__all__ = [
    "Analysis",
    "PacketTable",
    "analyze",
    "flag_names",
    "sort_keys",
    "simulate",
    "simulate_cleanup",
    "plan_load",
    "plan_run",
    "diagnose",
    "emulate",
    "emulate_cleanup",
    "__version__",
]

__version__: str

Column = tuple[str, str, bytes, bytes | None, list[str] | None]

@final
class Analysis:
    """The result of analysing one capture file."""

    json: str
    table: str | None
    warnings: list[str]
    error: str | None
    frames: int
    connections: int
    missing: list[int]
    packets: PacketTable | None

@final
class PacketTable:
    """The packets table, taken one column at a time (each freed on the Rust side as it goes)."""

    rows: int
    names: list[str]
    def take(self) -> Column | None: ...

def analyze(
    path: str,
    packets: bool = False,
    progress: bool = False,
    table: bool = False,
    name: str | None = None,
    findings: bool = False,
    conns: list[int] | None = None,
    sort: str = "id",
    on_progress: Callable[[int, int | None], object] | None = None,
) -> Analysis: ...
def flag_names() -> list[str]: ...
def sort_keys() -> list[tuple[str, str]]: ...
def simulate(
    path: str, out: str | None = None, seed: int | None = None, progress: bool = False, overrides: list[str] = ...
) -> str: ...
def simulate_cleanup(dir: str) -> list[str]: ...
def plan_load(path: str) -> str: ...
def plan_run(path: str, overrides: list[str], seed: int, out: str | None = None) -> str: ...
def diagnose(path: str) -> str: ...
def emulate(
    path: str,
    out: str,
    seed: int | None = None,
    busy_poll: bool = False,
    max_duration_s: float | None = None,
    command: list[str] | None = None,
    server: list[str] | None = None,
) -> str: ...
def emulate_cleanup() -> list[tuple[str, list[tuple[int, str]]]]: ...
