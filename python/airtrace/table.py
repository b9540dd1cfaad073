"""The terminal summary table of `airtrace analyze` (plain text, no imports beyond stdlib)."""

from __future__ import annotations

from typing import Any


def _rate(bps: float) -> str:
    for unit, scale in (("Gb/s", 1e9), ("Mb/s", 1e6), ("kb/s", 1e3)):
        if bps >= scale:
            return f"{bps / scale:.3g} {unit}"
    return f"{bps:.0f} b/s"


def _bytes(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def _ms(s: float | None) -> str:
    return "-" if s is None else f"{s * 1e3:.1f}"


def _retx(d: dict[str, Any]) -> str:
    if not d["retransmitted_packets"]:
        return "0"
    parts = [f"{d['retransmitted_packets']}"]
    kinds = [("to", d["timeout_retransmissions"]), ("fr", d["fast_retransmissions"]), ("sack", d["sack_retransmissions"])]
    detail = " ".join(f"{k}{n}" for k, n in kinds if n)
    return f"{parts[0]} ({detail})" if detail else parts[0]


def connection_table(report: dict[str, Any]) -> str:
    """A readable table of the connections in one file's report."""
    conns = report["connections"]
    lines = [f"{report['path']}: {report['frames']} frames, {report['tcp_frames']} TCP, {len(conns)} connections"]
    if not conns:
        return lines[0]
    header = ["id", "connection (a -> b)", "dir", "dur s", "pkts", "data", "goodput", "retx", "dupack", "rtt ms",
              "zwin", "notes"]
    rows = []
    for c in conns:
        for name, d in (("a>b", c["a_to_b"]), ("b>a", c["b_to_a"])):
            if not d["packets"]:
                continue
            notes = []
            if d["capture_duplicates"]:
                notes.append(f"{d['capture_duplicates']} capture dups")
            if d["mac_retries"]:
                notes.append(f"{d['mac_retries']} MAC retries")
            if d["max_backoff"] > 1:
                notes.append(f"backoff x{2 ** (d['max_backoff'] - 1)}")
            if name == "a>b" and c["state"] != "closed":
                notes.append(c["state"])
            first = name == "a>b" or not c["a_to_b"]["packets"]
            rows.append([
                str(c["id"]) if first else "",
                f"{c['a']} -> {c['b']}" if first else "",
                name,
                f"{c['duration_s']:.2f}" if first else "",
                str(d["packets"]),
                _bytes(d["data_bytes"]),
                _rate(d["goodput_bps"]),
                _retx(d),
                str(d["duplicate_acks"]),
                _ms(d["rtt"]["avg_s"]),
                str(d["zero_window_advertisements"]),
                ", ".join(notes),
            ])
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    right = {0, 3, 4, 5, 6, 8, 9, 10}

    def fmt(row: list[str]) -> str:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        return "  ".join(cells).rstrip()

    lines.append(fmt(header))
    lines.append(fmt(["-" * w for w in widths]))
    lines.extend(fmt(r) for r in rows)
    return "\n".join(lines)
