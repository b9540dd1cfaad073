"""Modules use each other in one direction (issue 17 item 10): no circle of imports.

A circle (the diagnosis' air → detect → collect → air, Python's diagnosis ↔ trace) means
no module can be read, tested or changed without the others. Here each module's uses of
its siblings are read from the source: in a Rust crate every `crate::NAME` path outside
comments and test modules (NAME a module; any other item is the crate root's), in the
Python package every import of `airtrace.…`, at the top or inside a function. The
graphs must have no cycle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: The crates kept free of circles (the others still have some: airtrace-wire's decoder
#: and its layers, airtrace-tcp's endpoint and its parts, airtrace-sim, airtrace-net,
#: airtrace-emu).
ACYCLIC_CRATES = [
    "airtrace-diagnose", "airtrace-analysis", "airtrace-pcap", "airtrace-link", "airtrace-report", "airtrace-cli",
    "airtrace-py",
]


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of `graph` (its nodes, the first repeated last), or None."""
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt, path)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node, [])):
            return found
    return None


def crate_graph(src: Path) -> dict[str, set[str]]:
    """Which top-level modules of the crate at `src` each one uses (`lib` for the root)."""
    files = {p.stem: p for p in src.glob("*.rs")} | {d.name: d / "mod.rs" for d in src.iterdir() if (d / "mod.rs").is_file()}
    modules = set(files) - {"lib", "main"}
    graph: dict[str, set[str]] = {}
    for name in modules:
        sources = [files[name]] + sorted((src / name).rglob("*.rs") if (src / name).is_dir() else [])
        used: set[str] = set()
        for path in sources:
            code = path.read_text().split("#[cfg(test)]")[0]
            for line in code.splitlines():
                if line.lstrip().startswith("//"):
                    continue
                for m in re.finditer(r"\bcrate::(\{[^}]*\}|\w+)", line):
                    for item in re.findall(r"\w+", m.group(1)):
                        used.add(item if item in modules else "lib")
        graph[name] = used - {name}
    return graph


def python_graph(package: Path) -> dict[str, set[str]]:
    """Which modules of the package at `package` each one imports (a compiled module,
    known by its stub, imports none of them)."""
    modules = {}
    for path in sorted(package.rglob("*.pyi")) + sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        used: set[str] = set()
        if path.suffix == ".pyi":
            graph[name] = used
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                used.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(here.split(".")[: len(here.split(".")) - node.level + 1] + ([base] if base else []))
                used.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)
        graph[name] = {u for u in used if u in modules and u != name}
    return graph


@pytest.mark.parametrize("crate", ACYCLIC_CRATES)
def test_the_crate_s_modules_use_each_other_in_one_direction(crate: str) -> None:
    graph = crate_graph(ROOT / "crates" / crate / "src")
    assert graph
    assert cycle(graph) is None, f"{crate}: a circle of modules: {' → '.join(cycle(graph) or [])}"


def test_the_python_modules_import_each_other_in_one_direction() -> None:
    graph = python_graph(ROOT / "python" / "airtrace")
    assert "airtrace.diagnosis" in graph["airtrace.trace"], "Trace.findings is the diagnosis'"
    assert cycle(graph) is None, f"a circle of imports: {' → '.join(cycle(graph) or [])}"


def test_a_circle_is_found() -> None:
    """The check itself: a circle of three is found, a chain is not."""
    assert cycle({"air": {"detect"}, "detect": {"collect"}, "collect": {"air"}}) == ["air", "detect", "collect", "air"]
    assert cycle({"collect": {"air", "finding"}, "detect": {"collect", "finding"}, "air": {"finding"}}) is None
