"""`airtrace.data`: the files shipped with airtrace, so that the README's tour runs from
any directory: sample captures, every scenario and every sweep plan of the repository.

    >>> import airtrace
    >>> airtrace.data.names()["plans"]                      # doctest: +SKIP
    ['holland_vaidya_manet', 'mathis', 'rais_bursts']
    >>> airtrace.example("kuang_cell")                      # the installed file  # doctest: +SKIP
    PosixPath('.../airtrace/data/scenarios/kuang_cell.toml')
    >>> airtrace.example("loss_trace", to=".")              # copied here, with its trace  # doctest: +SKIP
    PosixPath('scenarios/loss_trace.toml')

What the package holds here (about 1.5 MB): the two sample captures of
testdata/pcaps (sender and receiver side of one real transfer, 0.7 MB each; testdata
links to them), `scenarios/` (every scenario and the traces they read) and `plans/`
(every sweep plan): the repository's `scenarios/` and `plans/` are links to these
directories, the only copies. Besides them, `report.js` and `report.css` (the HTML
report's viewer) are not examples.

A scenario or plan is named by its file's stem (`kuang_cell`), with or without `.toml`,
or by its place here (`scenarios/holland_vaidya_manet`, needed where a scenario and a
plan share a name); a capture by its file name. Copies keep the places files have here
(`scenarios/NAME.toml`, `plans/NAME.toml`, captures at the top), and a copy takes the
files its TOML names with it (a scenario's trace, a plan's scenario), so that the copy
runs as the original does. `resolve` is how `airtrace simulate NAME` and `airtrace
sweep NAME` find them: a path that exists always wins.
"""

from __future__ import annotations

import filecmp
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Example", "UnknownExample", "copy", "description", "example", "find", "listing", "names", "needs", "resolve", "root"
]

#: The kinds of shipped files, each with its directory here ("" for the top).
KINDS = {"captures": "", "scenarios": "scenarios", "plans": "plans"}

#: File names that make a file at the top a capture.
CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".pcap.gz", ".pcapng.gz")


class UnknownExample(ValueError):
    """A name that is no shipped file (or names two): the message lists the names."""


@dataclass(frozen=True)
class Example:
    """One shipped file: its kind ("captures", "scenarios", "plans"), its name and its
    place relative to the data directory."""

    kind: str
    name: str
    relative: Path

    @property
    def path(self) -> Path:
        """The installed file."""
        return root() / self.relative


def root() -> Path:
    """The data directory of the installed package."""
    return Path(__file__).resolve().parent


def names(kind: str | None = None) -> dict[str, list[str]]:
    """The shipped names by kind (only `kind`'s when given), sorted."""
    kinds = KINDS if kind is None else {kind: KINDS[kind]}
    return {k: sorted(e.name for e in _all() if e.kind == k) for k in kinds}


def _all() -> list[Example]:
    found = []
    for kind, sub in KINDS.items():
        directory = root() / sub
        for path in sorted(directory.iterdir()):
            if not path.is_file():
                continue
            if kind == "captures" and path.name.endswith(CAPTURE_SUFFIXES):
                found.append(Example(kind, path.name, Path(path.name)))
            elif kind != "captures" and path.suffix == ".toml":
                found.append(Example(kind, path.stem, Path(sub) / path.name))
    return found


def find(name: str, kind: str | None = None) -> Example:
    """The shipped file `name` names (of `kind` when given): `kuang_cell`,
    `kuang_cell.toml`, `scenarios/kuang_cell`, `sample-sender.pcapng`; UnknownExample
    when none does, or when a scenario and a plan both do."""
    wanted = name.removesuffix(".toml")
    where, _, stem = wanted.rpartition("/")
    matches = [
        e
        for e in _all()
        if (kind is None or e.kind == kind)
        and e.name == stem
        and where in ("", KINDS[e.kind])
        and (e.kind != "captures" or not where)
    ]
    if len(matches) == 1:
        return matches[0]
    if matches:
        choices = " or ".join(f"{e.relative.with_suffix('').as_posix()!r}" for e in matches)
        raise UnknownExample(f"{name!r} names a shipped {' and a '.join(e.kind[:-1] for e in matches)}: say {choices}")
    raise UnknownExample(_unknown(name, kind))


def _unknown(name: str, kind: str | None, why: str | None = None) -> str:
    """Why `name` is no shipped file of `kind` (`why`, or that it is none), with the
    nearest name and the names there are."""
    from airtrace.suggest import did_you_mean

    by_kind = names(kind)
    every = [n for ns in by_kind.values() for n in ns]
    why = why or f"{name!r} is no shipped {'example' if kind is None else kind[:-1]}"
    listed = "; ".join(f"{k}: {', '.join(ns)}" for k, ns in by_kind.items())
    return f"{why}{did_you_mean(name.removesuffix('.toml'), every)} ({listed})"


def resolve(arg: str | os.PathLike[str], kind: str) -> str:
    """What `airtrace simulate ARG` (kind "scenarios") or `airtrace sweep ARG` ("plans")
    reads: ARG itself when it exists or has a directory in it (the loader then says
    what is wrong with it); else the shipped file of that name, UnknownExample when
    there is none."""
    text = os.fspath(arg)
    if os.path.exists(text) or os.sep in text or "/" in text or not text:
        return text
    try:
        return str(find(text, kind).path)
    except UnknownExample:
        raise UnknownExample(_unknown(text, kind, f"{text}: no such file, nor a shipped {kind[:-1]}")) from None


def needs(e: Example) -> list[Path]:
    """`e`'s file and, after it, every shipped file its TOML names (a trace, a plan's
    scenario, and what that names in turn), relative to the data directory."""
    base = root()
    order = [e.relative]
    for relative in order:
        if relative.suffix != ".toml":
            continue
        text = (base / relative).read_text(encoding="utf-8")
        for double, single in re.findall(r'"((?:[^"\\\n]|\\.)*)"|\'([^\'\n]*)\'', text):
            target = ((base / relative).parent / (double or single)).resolve()
            if not target.is_file() or base not in target.parents:
                continue
            named = target.relative_to(base)
            if named not in order:
                order.append(named)
    return order


def copy(name: str, to: str | os.PathLike[str] = ".") -> list[Path]:
    """Copies the shipped file `name` and the files it names (see `needs`) into `to`, at
    their places there (`to/scenarios/loss_trace.toml`, `to/scenarios/traces/...`).
    Returns the paths written or already there with the same bytes; FileExistsError,
    before anything is written, when one is there with other bytes."""
    e = find(name)
    base, dest = root(), Path(to)
    pairs = [(base / r, dest / r) for r in needs(e)]
    for src, dst in pairs:
        if dst.exists() and not (dst.is_file() and filecmp.cmp(src, dst, shallow=False)):
            raise FileExistsError(f"{dst}: already there, and not the shipped {name}; remove it or copy elsewhere")
    for src, dst in pairs:
        if not dst.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
    return [dst for _, dst in pairs]


def example(name: str, to: str | os.PathLike[str] | None = None) -> Path:
    """The shipped file `name` (`airtrace.data.names()` lists them): its installed path,
    or with `to`, the path of its copy there (made by `copy`, with what it names)."""
    if to is None:
        return find(name).path
    return copy(name, to)[0]


def listing() -> str:
    """What `airtrace example` prints without a name: the shipped captures, scenarios and
    plans, each with its description and what to do with it."""
    lines = []
    for kind, usage in (
        ("captures", "airtrace example NAME copies one here"),
        ("scenarios", "airtrace simulate NAME runs one, from anywhere"),
        ("plans", "airtrace sweep NAME --out DIR runs one"),
    ):
        lines.append(f"{kind.capitalize()} ({usage}):")
        lines += [f"  {name:<22} {description(find(name, kind))}" for name in names(kind)[kind]]
    return "\n".join(lines) + "\n"


def description(e: Example) -> str:
    """A line saying what `e` is: a plan's `description`, a scenario's first sentence of
    its opening comment, a capture's size."""
    if e.kind == "captures":
        size = e.path.stat().st_size
        return f"a capture, {size / 1e6:.1f} MB"
    text = e.path.read_text(encoding="utf-8")
    found = re.search(r'^description = "([^"]*)"', text, re.M)
    if found:
        line = found.group(1)
    else:
        comment = " ".join(m.strip() for m in re.findall(r"^#(.*)$", text.split("\n\n")[0], re.M))
        line = _first_sentence(comment)
    return line if len(line) <= 90 else line[:89].rstrip() + "…"


def _first_sentence(text: str) -> str:
    """`text` up to its first `.` or `:` that ends a sentence: followed by a space, outside
    parentheses and quotes, not in "et al."."""
    depth, quoted = 0, False
    for i, c in enumerate(text):
        if c == '"':
            quoted = not quoted
        elif c in "()":
            depth += 1 if c == "(" else -1
        elif c in ".:" and not depth and not quoted and text[i + 1 : i + 2] == " " and not text[:i].endswith(" al"):
            return text[:i]
    return text
