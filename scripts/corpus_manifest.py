"""Regenerate the measured part of a corpus manifest (testdata/corpus/MANIFEST.md).

A corpus manifest has hand-written parts (where each capture comes from, its licence,
what it shows) and two measured tables, what tshark says and what `airtrace analyze`
says of every capture; this script writes the measured tables from the files, so they
are never typed by hand. They sit between the markers `<!-- measured: begin -->` and
`<!-- measured: end -->`; everything outside them is left as it is.

    .venv/bin/python scripts/corpus_manifest.py [DIR]          # rewrite DIR/MANIFEST.md
    .venv/bin/python scripts/corpus_manifest.py --check [DIR]  # exit 1 if it is stale

DIR defaults to testdata/corpus. Every capture file in DIR must have a row in the
manifest's provenance table (and every row a file), else the script stops with the
names. tests/test_corpus_manifest.py checks the airtrace table against the analyzer
(`airtrace_numbers`, `manifest_airtrace_rows`), so the manifest cannot go stale.

The tshark columns: frames matching each `tcp.analysis.*` display filter (default
preferences; `retransmission` includes fast and spurious ones), conversations = the
distinct `tcp.stream` values, maxRTO = the largest `tcp.analysis.rto`.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

BEGIN, END = "<!-- measured: begin -->", "<!-- measured: end -->"
ROOT = Path(__file__).resolve().parent.parent

TSHARK_FLAGS = ("retransmission", "fast_retransmission", "spurious_retransmission", "duplicate_ack",
                "zero_window", "lost_segment", "out_of_order")
TSHARK_COLUMNS = ("format", "link type", "frames", "dur (s)", "TCP conns", "retx", "fast", "spur", "dupack",
                  "zerowin", "lost", "ooo", "maxRTO")

# airtrace's per-direction counters summed over both directions of every connection.
DIRECTION_SUMS = {
    "data bytes": "data_bytes",
    "retx": "retransmitted_packets",
    "fast": "fast_retransmissions",
    "rto": "timeout_retransmissions",
    "spur": "spurious_retransmissions",
    "dupack": "duplicate_acks",
    "zerowin": "zero_window_advertisements",
    "lost": "lost_segments",
    "ooo": "out_of_order",
    "capdup": "capture_duplicates",
    "macretry": "mac_retries",
}
AIRTRACE_COLUMNS = ("frames", "TCP frames", "conns", *DIRECTION_SUMS, "warnings", "error")


def capture_files(directory: Path) -> list[Path]:
    """The captures of a corpus directory: every file but the manifest, sorted."""
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix != ".md")


def airtrace_numbers(path: Path) -> dict[str, str]:
    """What `airtrace analyze` says of one capture, as the manifest prints it."""
    import airtrace

    try:
        report = airtrace.read(path).report
    except airtrace.AnalysisError as e:
        return {c: "-" for c in AIRTRACE_COLUMNS} | {"error": _cell(str(e))}
    conns = report["connections"]
    row = {"frames": str(report["frames"]), "TCP frames": str(report["tcp_frames"]), "conns": str(len(conns))}
    for column, field in DIRECTION_SUMS.items():
        row[column] = str(sum(int(c[d][field]) for c in conns for d in ("a_to_b", "b_to_a")))
    row["warnings"] = str(len(report["warnings"]))
    row["error"] = _cell(report["error"]) if report["error"] else "-"
    return row


def _cell(text: str) -> str:
    """`text` made safe for one table cell (no pipes, no newlines, no file paths)."""
    text = re.sub(r"\S*/", "", text)
    return text.replace("|", "/").replace("\n", " ")[:120]


def tshark_numbers(path: Path, tshark: str, capinfos: str) -> dict[str, str]:
    """What tshark says of one capture: file format and link type (capinfos), frames,
    duration, TCP conversations, and the frames carrying each `tcp.analysis` flag."""
    info = subprocess.run([capinfos, "-T", "-M", "-t", "-E", "-c", "-u", str(path)], capture_output=True,
                          text=True).stdout.splitlines()
    fields = dict(zip(info[0].split("\t"), info[1].split("\t"))) if len(info) >= 2 else {}
    cmd = [tshark, "-n", "-r", str(path), "-T", "fields", "-E", "occurrence=a", "-e", "frame.number", "-e", "tcp.stream"]
    for flag in TSHARK_FLAGS:
        cmd += ["-e", f"tcp.analysis.{flag}"]
    cmd += ["-e", "tcp.analysis.rto"]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    frames, streams, counts, max_rto = 0, set(), dict.fromkeys(TSHARK_FLAGS, 0), None
    for line in out.splitlines():
        cells = line.split("\t")
        frames += 1
        streams.update(s for s in cells[1].split(",") if s)
        for flag, cell in zip(TSHARK_FLAGS, cells[2:]):
            counts[flag] += bool(cell.strip())
        for rto in cells[-1].split(","):
            if rto.strip():
                max_rto = max(max_rto or 0.0, float(rto))
    duration = fields.get("Capture duration (seconds)", "")
    row = {
        "format": fields.get("File type", "?"),
        "link type": fields.get("File encapsulation", "?"),
        "frames": str(frames),
        "dur (s)": f"{float(duration):.1f}" if _is_number(duration) else "-",
        "TCP conns": str(len(streams)),
    }
    row |= {column: str(counts[flag]) for column, flag in zip(TSHARK_COLUMNS[5:12], TSHARK_FLAGS)}
    row["maxRTO"] = "-" if max_rto is None else f"{max_rto:.3g}"
    return row


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def table(title: str, columns: tuple[str, ...], rows: dict[str, dict[str, str]]) -> str:
    lines = [f"### {title}", "", "| file | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for name, row in rows.items():
        lines.append(f"| `{name}` | " + " | ".join(row[c] for c in columns) + " |")
    return "\n".join(lines)


def provenance_files(manifest: str) -> list[str]:
    """The file names the hand-written provenance table lists: the first column of the
    section "## Where each file comes from"."""
    section = manifest.partition("## Where each file comes from")[2].partition("\n## ")[0]
    return re.findall(r"^\| `([^`]+)` \|", section, flags=re.M)


def manifest_airtrace_rows(manifest: str) -> dict[str, dict[str, str]]:
    """The airtrace table of a manifest, read back: file name → column → cell."""
    section = manifest.split("### What airtrace analyze says", 1)[1].split(END)[0]
    rows: dict[str, dict[str, str]] = {}
    for line in section.splitlines():
        m = re.match(r"^\| `([^`]+)` \| (.*) \|$", line)
        if m:
            rows[m.group(1)] = dict(zip(AIRTRACE_COLUMNS, (c.strip() for c in m.group(2).split(" | "))))
    return rows


def measured(directory: Path, tshark: str, capinfos: str) -> str:
    files = capture_files(directory)
    theirs = {p.name: tshark_numbers(p, tshark, capinfos) for p in files}
    ours = {p.name: airtrace_numbers(p) for p in files}
    total = sum(p.stat().st_size for p in files)
    return "\n\n".join([
        BEGIN,
        f"{len(files)} files, {total} bytes ({total / 2**20:.1f} MiB). Written by `scripts/corpus_manifest.py`; "
        "do not edit by hand.",
        table("What tshark says", TSHARK_COLUMNS, theirs),
        table("What airtrace analyze says", AIRTRACE_COLUMNS, ours),
        END,
    ])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory", nargs="?", type=Path, default=ROOT / "testdata" / "corpus")
    parser.add_argument("--check", action="store_true", help="exit 1 if the measured part is out of date")
    args = parser.parse_args(argv)
    tshark, capinfos = shutil.which("tshark"), shutil.which("capinfos")
    if tshark is None or capinfos is None:
        print("tshark and capinfos are needed (apt install tshark)", file=sys.stderr)
        return 2
    path = args.directory / "MANIFEST.md"
    text = path.read_text()
    listed = set(provenance_files(text))
    present = {p.name for p in capture_files(args.directory)}
    if listed != present:
        print(f"{path}: no provenance row for {sorted(present - listed)}; rows without a file: "
              f"{sorted(listed - present)}", file=sys.stderr)
        return 1
    head, _, rest = text.partition(BEGIN)
    tail = rest.partition(END)[2] if rest else "\n"
    new = head + measured(args.directory, tshark, capinfos) + tail
    if args.check:
        if new != text:
            print(f"{path} is out of date: run scripts/corpus_manifest.py", file=sys.stderr)
            return 1
        return 0
    path.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
