"""Matches `airtrace diagnose` on testdata/corpus against the verdict tables of
docs/diagnosis-corpus2.md: which reviewed findings are still there, and which findings
no review has read.

A reviewed finding is still there when a finding of the same kind, connection and
direction shares an evidence frame with it (or either has no evidence frames). Prints
the counts by verdict; `--json OUT` writes every row with its match and every finding
nobody read, for reading at the frames.

    .venv/bin/python scripts/diagnosis_review.py [--json OUT]
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROW = re.compile(r"\| (\d+) \| (\w+) \| (\d+) \| (\w+) \| ([^|]*) \| ([^|]*) \| \*\*([\w ]+)\*\* \| (.*)$")


def reviewed_rows(doc: str) -> list[dict]:
    """The rows of the review's per-capture tables."""
    rows, cap = [], None
    for line in doc.splitlines():
        head = re.match(r"### (\S+): \d+ finding", line)
        if head:
            cap = head.group(1)
            continue
        m = ROW.match(line)
        if m and cap:
            n, kind, conn, direction, _span, ev, verdict, _why = m.groups()
            rows.append({"cap": cap, "n": int(n), "kind": kind, "conn": int(conn), "dir": direction,
                         "ev": [int(x) for x in re.findall(r"\d+", ev)], "verdict": verdict})
    return rows


def diagnose(path: Path) -> list[dict]:
    out = subprocess.run([str(ROOT / ".venv/bin/airtrace"), "diagnose", "--json", str(path)],
                         capture_output=True, text=True, check=False)
    return json.loads(out.stdout) if out.returncode == 0 and out.stdout.strip() else []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write rows, matches and unread findings here")
    args = ap.parse_args()
    rows = reviewed_rows((ROOT / "docs/diagnosis-corpus2.md").read_text())
    caps = sorted(p for p in (ROOT / "testdata/corpus").iterdir() if p.suffix != ".md")
    now = {p.name: diagnose(p) for p in caps}
    kept, gone, matched = collections.Counter(), collections.Counter(), collections.defaultdict(set)
    for r in rows:
        def same(f: dict, r: dict = r) -> bool:
            key = (f["kind"], f["connection"], f["direction"]) == (r["kind"], r["conn"], r["dir"])
            return key and (not r["ev"] or not f["evidence"] or bool(set(r["ev"]) & set(f["evidence"])))
        r["match"] = [i for i, f in enumerate(now.get(r["cap"], [])) if same(f)]
        matched[r["cap"]].update(r["match"])
        (kept if r["match"] else gone)[r["verdict"]] += 1
    unread = [{"cap": c, "n": i, **f} for c, fs in now.items() for i, f in enumerate(fs) if i not in matched[c]]
    print("findings now", sum(map(len, now.values())))
    print("reviewed, still there", dict(kept))
    print("reviewed, gone", dict(gone))
    print("not matched to a reviewed row", len(unread))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "unread": unread, "now": now}, indent=1))


if __name__ == "__main__":
    main()
