"""The findings as `airtrace diagnose` prints them for people.

Per connection a line saying what it carried (`airtrace.trace.connection_lines`) and
the kinds found, costliest first; then a paragraph per kind and direction. The JSON
form is each `Finding.to_dict()`; this module only writes the text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Mapping, Sequence

    from airtrace.finding import Finding


def _kind_cost_text(fs: list[Finding]) -> str:
    """What the findings `fs` of one kind cost, for the summary line: ` (2.3 s)`, or
    ` (behind 2.3 s of timeout_backoff)` for a cause of the timeouts' waits."""
    cost = sum(f.cost_s for f in fs)
    if cost > 0:
        return f" ({cost:.1f} s)"
    explained = sum(f.explains_timeout_s for f in fs)
    return f" (behind {explained:.1f} s of timeout_backoff)" if explained > 0 else ""


def findings_text(path: str, findings: Sequence[Finding], connections: Mapping[int, str]) -> str:
    """Findings for people. Per connection a line saying what it carried (from
    `connections`) and the kinds found, costliest first (a cause behind the
    timeouts' waits says how many seconds of them it explains: they are counted once,
    by timeout_backoff); then a paragraph per kind and direction, its costliest
    finding in full and any others of the same kind as one line each. Connections
    without findings get their line too, when there are few."""
    import textwrap
    from itertools import groupby

    lines = [f"{path}: {len(findings)} finding(s)" if findings else f"{path}: no findings"]
    found_in = {f.connection for f in findings}
    quiet = [line for conn, line in sorted(connections.items()) if conn not in found_in]
    if len(quiet) <= 5:
        lines.extend(f"\n{line}: no findings" for line in quiet)
    else:
        lines.append(f"\n{len(quiet)} other connections: no findings")
    by_conn = groupby(sorted(findings, key=lambda f: f.connection), key=lambda f: f.connection)
    for conn, found in by_conn:
        groups: dict[tuple[str, str], list[Finding]] = {}
        for f in sorted(found, key=lambda f: (-f.cost_s, f.start_s)):
            groups.setdefault((f.kind, f.direction), []).append(f)
        # Kinds by what they cost (the sum over their findings), then by first appearance.
        order = sorted(groups.items(), key=lambda g: (-sum(f.cost_s for f in g[1]), min(f.start_s for f in g[1])))
        summary = ", ".join(
            f"{kind}{_kind_cost_text(fs)}" + (f" ×{len(fs)}" if len(fs) > 1 else "") for (kind, _), fs in order
        )
        lines.append(f"\n{connections.get(conn, f'connection {conn}')}")
        lines.append(f"  found: {summary}")
        for (kind, direction), fs in order:
            f = fs[0]
            cost = (
                f" cost {f.cost_s:.2f} s ({f.throughput_share:.0%})"
                if f.cost_s > 0
                else f", behind {f.explains_timeout_s:.2f} s of timeout_backoff's cost"
                if f.explains_timeout_s > 0
                else ""
            )
            lines.append(f"\n[{kind}] connection {conn} {direction}, {f.start_s:.2f}-{f.end_s:.2f} s{cost}")
            lines.extend(textwrap.wrap(f.explanation, 100, initial_indent="  ", subsequent_indent="  "))
            lines.extend(textwrap.wrap("Fix: " + f.fix, 100, initial_indent="  ", subsequent_indent="  "))
            if f.evidence:
                ev = f.evidence
                more = f" (10 of {len(ev)}; --json lists them all)" if len(ev) > 10 else ""
                lines.append("  Evidence: frames " + ", ".join(str(x) for x in ev[:10]) + more)
            if len(fs) > 1:
                others = [
                    f"{o.start_s:.2f}-{o.end_s:.2f} s" + (f" ({o.cost_s:.2f} s)" if o.cost_s > 0 else "")
                    for o in sorted(fs[1:], key=lambda o: o.start_s)
                ]
                lines.extend(
                    textwrap.wrap(
                        f"{len(others)} more like it: " + ", ".join(others),
                        100,
                        initial_indent="  ",
                        subsequent_indent="  ",
                    )
                )
    return "\n".join(lines) + "\n\n"
