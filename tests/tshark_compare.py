"""Compare airtrace's per-packet flags with tshark's, file by file.

Run as a script for the table in docs/tshark-agreement.md:
    .venv/bin/python tests/tshark_compare.py [FILE|DIR...]

A directory stands for the captures in it (its MANIFEST.md left out), so
`tests/tshark_compare.py testdata/corpus` measures the second corpus. After the
per-file table come the totals and the disagreeing frames grouped by class (which
flags airtrace set, which tshark set), with a few examples of each.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import airtrace

FLAGS = ("retransmission", "fast_retransmission", "duplicate_ack", "zero_window")

# Classes where airtrace is right and tshark is wrong (docs/tshark-agreement.md says
# why, and tests prove each on captures with known truth): such packets count as
# agreement. Each maps an airtrace column to the tshark flags it explains.
EXPLAINED = {
    "capture_duplicate": "the same frame captured twice: tshark calls the copy a retransmission or a duplicate ACK",
    "mac_retry": "an 802.11 MAC retry: tshark calls the copy a retransmission or a duplicate ACK",
}
# And one class checked from the packets themselves: bytes that were captured
# before, sent again soon after the highest segment. tshark's out-of-order test is a
# time threshold and calls them out_of_order; they are retransmissions.
SEEN_BEFORE = "repeat of captured bytes that tshark calls out_of_order"
# And one more checked from the packets: after SYN/ACKs with different initial sequence
# numbers, tshark follows another one than the peer accepted; the peer's ACK shows which
# one it accepted, and data in that space is new, not retransmitted (issue 18 class 3).
ACCEPTED_SPACE = "new data in the space of the SYN/ACK the peer acknowledged, where tshark follows a later one"


def tshark_flags(tshark: str, path: Path) -> dict[int, set[str]]:
    """Frame number → the FLAGS (and out_of_order) tshark sets, with 802.11
    retransmission detection off."""
    cmd = [tshark, "-n", "-o", "wlan.retransmitted:FALSE", "-r", str(path), "-T", "fields", "-e", "frame.number"]
    for f in (*FLAGS, "out_of_order"):
        cmd += ["-e", f"tcp.analysis.{f}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    flagged: dict[int, set[str]] = {}
    for line in out.splitlines():
        cells = line.split("\t")
        names = {f for f, c in zip((*FLAGS, "out_of_order"), cells[1:]) if c.strip()}
        if names:
            flagged[int(cells[0])] = names
    return flagged


@dataclass
class Agreement:
    path: Path
    union: int = 0
    agree: int = 0
    explained: int = 0
    disagreements: list[tuple[int, set[str], set[str]]] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return 1.0 if self.union == 0 else self.agree / self.union


def captured_before(packets, frame: int) -> bool:
    """Every byte of `frame`'s segment was in an earlier frame of the same direction."""
    row = packets.loc[packets.frame == frame].iloc[0]
    earlier = packets[(packets.frame < frame) & (packets.conn == row.conn) & (packets.dir == row.dir)
                      & (packets.seglen > 0) & ~packets.capture_duplicate]
    start, end = int(row.seq), int(row.seq) + int(row.seglen)
    covered = start
    for s, n in sorted(zip(earlier.seq.astype("int64"), earlier.seglen.astype("int64"))):
        if s <= covered < s + n:
            covered = s + n
    return covered >= end


def in_accepted_space(packets, frame: int) -> bool:
    """`frame` is new data (or the first FIN) in the sequence space of the SYN/ACK its
    peer acknowledged, in a direction that had also sent in another space (other
    SYN/ACKs, a middlebox's ACK; tshark may follow those): the peer's first ACK after
    the SYN/ACKs acknowledges that one's ISN + 1 (RFC 9293 §3.5), and the frame's bytes
    lie beyond it and were not captured before."""
    row = packets.loc[packets.frame == frame].iloc[0]
    conn = packets[(packets.conn == row.conn) & (packets.frame < frame)]
    flags = conn.tcp_flags.fillna(0).astype(int)
    mine = conn[conn.dir == row.dir]
    syn_acks = mine[(flags[mine.index] & 0x12) == 0x12]
    if syn_acks.empty:
        return False
    answers = conn[(conn.dir != row.dir) & (flags & 0x12 == 0x10) & (conn.frame > syn_acks.frame.min())]
    if answers.empty:
        return False
    accepted = (int(answers.iloc[0].ack) - 1) % 2**32

    def inside(seq: int) -> bool:
        return (seq - accepted) % 2**32 < 2**31

    isns = syn_acks.seq.astype("int64")
    if accepted not in set(isns):
        return False
    accepted_at = int(syn_acks.frame[isns == accepted].min())
    before = mine[(mine.frame < accepted_at) & ((flags[mine.index] & 0x12) != 0x12)]
    if (isns == accepted).all() and before.empty:
        return False  # one space only: nothing for tshark to follow instead
    if not inside(int(row.seq)) or int(row.seq) == accepted:
        return False
    if int(row.seglen) > 0:
        return not captured_before(packets, frame)
    return bool(int(row.tcp_flags) & 0x01) and not (mine.tcp_flags.fillna(0).astype(int) & 0x01).any()


def compare(tshark: str, path: Path) -> Agreement:
    theirs_all = tshark_flags(tshark, path)
    packets = airtrace.read(path).packets()
    cols = packets[["frame", *FLAGS, *EXPLAINED]]
    ours: dict[int, set[str]] = {}
    explained: set[int] = set()
    for f in FLAGS:
        for frame in cols.loc[cols[f], "frame"]:
            ours.setdefault(int(frame), set()).add(f)
    for e in EXPLAINED:
        explained.update(int(x) for x in cols.loc[cols[e], "frame"])
    theirs = {k: v - {"out_of_order"} for k, v in theirs_all.items() if v - {"out_of_order"}}
    result = Agreement(path)
    for frame in sorted(set(theirs) | set(ours)):
        t, a = theirs.get(frame, set()), ours.get(frame, set())
        result.union += 1
        if t == a:
            result.agree += 1
        elif frame in explained and not a:
            result.agree += 1
            result.explained += 1
        elif (a == {"retransmission"} and not t and "out_of_order" in theirs_all.get(frame, set())
              and captured_before(packets, frame)):
            result.agree += 1
            result.explained += 1
        elif not a and t == {"retransmission"} and in_accepted_space(packets, frame):
            result.agree += 1
            result.explained += 1
        else:
            result.disagreements.append((frame, a, t))
    return result


def compare_all(tshark: str, paths: list[Path]) -> list[Agreement]:
    """`compare` for each capture, in order, with as many tshark processes at a time as
    there are CPUs (tshark's dissection is most of the time; one at a time, the second
    corpus took minutes of a CI run)."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return list(pool.map(lambda path: compare(tshark, path), paths))


def capture_paths(args: list[str]) -> list[Path]:
    """The captures named on the command line, each directory replaced by the capture
    files in it, sorted (a manifest, `*.md`, is no capture)."""
    paths: list[Path] = []
    for arg in map(Path, args):
        if arg.is_dir():
            paths += sorted(p for p in arg.iterdir() if p.is_file() and p.suffix != ".md")
        else:
            paths.append(arg)
    return paths


def disagreement_classes(results: list[Agreement]) -> dict[tuple[str, str], list[str]]:
    """The disagreeing frames of every file grouped by class: (the flags airtrace set,
    the flags tshark set) → ["file:frame", ...], the largest class first."""
    classes: dict[tuple[str, str], list[str]] = {}
    for r in results:
        for frame, ours, theirs in r.disagreements:
            key = (", ".join(sorted(ours)) or "none", ", ".join(sorted(theirs)) or "none")
            classes.setdefault(key, []).append(f"{r.path.name}:{frame}")
    return dict(sorted(classes.items(), key=lambda item: (-len(item[1]), item[0])))


def main(argv: list[str]) -> int:
    import shutil

    from conftest import corpus_files

    tshark = shutil.which("tshark")
    if tshark is None:
        print("tshark is not installed", file=sys.stderr)
        return 1
    paths = capture_paths(argv) or corpus_files()
    print("| file | flagged by either | agree | of which explained | agreement |")
    print("|---|---|---|---|---|")
    results = compare_all(tshark, paths)
    for r in results:
        print(f"| `{r.path.name}` | {r.union} | {r.agree} | {r.explained} | {r.ratio:.1%} |")
    union, agree = sum(r.union for r in results), sum(r.agree for r in results)
    explained = sum(r.explained for r in results)
    print(f"| **all {len(results)} files** | {union} | {agree} | {explained} | {agree / union if union else 1:.2%} |")
    classes = disagreement_classes(results)
    if classes:
        print("\n| airtrace flags | tshark flags | frames | examples (file:frame) |")
        print("|---|---|---|---|")
        for (ours, theirs), frames in classes.items():
            print(f"| {ours} | {theirs} | {len(frames)} | {', '.join(frames[:4])} |")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    sys.exit(main(sys.argv[1:]))
