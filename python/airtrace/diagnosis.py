"""`airtrace.diagnose`: name the cause of a slow transfer, show the evidence, say the fix.

    >>> import airtrace
    >>> for f in airtrace.diagnose("capture.pcapng"):                  # doctest: +SKIP
    ...     print(f["kind"], f["start_s"], f["cost_s"], f["explanation"])
    >>> airtrace.diagnose("runs/gsm")                                   # doctest: +SKIP

A capture is diagnosed by the Rust detectors (crates/airtrace-diagnose) in the
analyzer's single pass. A bundle (the directory a simulation writes) is diagnosed
from its sender capture, plus what only its other files can show: the 802.11 layer
from its `air` capture (collisions, corrupted frames, MAC retries), and from its link
log the link resets and the header-decompression failures after them. Evidence
always names frames of the sender capture. docs/diagnosis.md lists every kind.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airtrace import _core

if TYPE_CHECKING:
    import pandas as pd

#: Columns of a findings table, in order.
COLUMNS = (
    "kind",
    "connection",
    "direction",
    "start_s",
    "end_s",
    "cost_s",
    "throughput_share",
    "evidence",
    "explanation",
    "fix",
    "details",
)


#: Kinds that only a capture of the 802.11 frames (radiotap) can show.
AIR_KINDS = frozenset({"data_ack_collisions", "bad_fcs", "mac_retries", "rate_adaptation_thrash"})


class DiagnosisError(ValueError):
    """Nothing could be read: the message is one line naming the file and place."""


def diagnose(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The findings for a capture file or a bundle directory, in order of connection
    and start time. Each is a dict with the keys of COLUMNS."""
    path = Path(path)
    if path.is_dir():
        return _diagnose_bundle(path)
    try:
        findings: list[dict[str, Any]] = json.loads(_core.diagnose(os.fspath(path)))
    except ValueError as e:
        raise DiagnosisError(str(e)) from None
    return findings


def findings_frame(findings: list[dict[str, Any]]) -> pd.DataFrame:
    """The findings as a pandas DataFrame, one row each."""
    import pandas as pd

    return pd.DataFrame(findings, columns=list(COLUMNS))


def diagnosed_capture(path: str | os.PathLike[str]) -> Path | None:
    """The capture whose frames and connections the findings for `path` refer to: the
    file itself, or a bundle's sender capture (else its link_in or receiver capture)."""
    path = Path(path)
    if not path.is_dir():
        return path
    return next((path / f"{v}.pcap" for v in ("sender", "link_in", "receiver") if (path / f"{v}.pcap").is_file()), None)


def _diagnose_bundle(bundle: Path) -> list[dict[str, Any]]:
    capture = diagnosed_capture(bundle)
    findings = diagnose(capture) if capture is not None else []
    extra = []
    air = bundle / "air.pcap"
    if air.is_file() and capture is not None:
        extra.extend(_air_findings(air))
    log = bundle / "link.jsonl"
    if log.is_file():
        hc = _header_compression_failures(log)
        _shares(hc, bundle)
        extra.extend(hc)
    _as_capture_frames(extra, capture)
    findings.extend(extra)
    findings.sort(key=lambda f: (f["connection"], f["start_s"], f["kind"]))
    return findings


def _air_findings(air: Path) -> list[dict[str, Any]]:
    """The 802.11-layer findings of the sniffer's capture, timed from its first frame
    (`_first_frame_time`, for `_as_capture_frames` to move them onto the sender
    capture's axis), their evidence as (source, IP ID, time) to match there."""
    from airtrace.trace import read

    found = [f for f in diagnose(air) if f["kind"] in AIR_KINDS]
    if not found:
        return []
    packets = read(air).packets()[["frame", "time", "time_rel", "ip_src", "ip_id"]].set_index("frame")
    for f in found:
        rows = packets.loc[[e for e in f.pop("evidence") if e in packets.index]].dropna(subset=["ip_id"])
        f["evidence"] = []
        f["_ids"] = [(r.ip_src, int(r.ip_id), float(r.time_rel)) for r in rows.itertuples()]
        f["_first_frame_time"] = packets["time"].iloc[0]
    return found


def _as_capture_frames(findings: list[dict[str, Any]], capture: Path | None) -> None:
    """Turns the evidence packets (`_ids`: source address, IP ID, time) into frame
    numbers of the bundle's capture, matched by source and IP ID (the nearest in time
    when an IP ID repeats). Findings timed from another capture's first frame
    (`_first_frame_time`) move onto this one's time axis: the bundle's captures share
    one clock, their first frames differ by a backoff."""
    ids = [f.pop("_ids") for f in findings]
    starts = [f.pop("_first_frame_time", None) for f in findings]
    if capture is None or not findings:
        return
    from airtrace.trace import read

    packets = read(capture).packets()[["frame", "time", "time_rel", "ip_src", "ip_id"]]
    for f, wanted, start in zip(findings, ids, starts):
        shift = 0.0 if start is None else (start - packets["time"].iloc[0]).total_seconds()
        f["start_s"] += shift
        f["end_s"] += shift
        frames = []
        for src, ip_id, t in wanted:
            t += shift
            match = packets[(packets["ip_src"] == src) & (packets["ip_id"] == ip_id)]
            if len(match):
                nearest = (match["time_rel"] - t).abs().idxmin()
                frames.append(int(match.loc[nearest, "frame"]))
        f["evidence"] = frames


def _shares(findings: list[dict[str, Any]], bundle: Path) -> None:
    """`throughput_share` of each finding, from the flow's duration in summary.json."""
    summary = bundle / "summary.json"
    if not summary.is_file():
        return
    flows = json.loads(summary.read_text())["flows"]
    for f in findings:
        flow = flows[f["connection"]] if f["connection"] < len(flows) else None
        if flow and flow.get("end_s"):
            duration = flow["end_s"] - flow["start_s"]
            f["throughput_share"] = min(f["cost_s"] / duration, 1.0) if duration > 0 else 0.0


def _header_compression_failures(log: Path) -> list[dict[str, Any]]:
    """After each link reset, the segments the VJ decompressor threw away (Ludwig et al. §5.3)."""
    resets: list[float] = []
    flushed: dict[int, int] = {}
    discards: dict[int, list[dict[str, Any]]] = {}
    with log.open() as f:
        for line in f:
            e = json.loads(line)
            kind, t = e["kind"], e["t_ns"] / 1e9
            if kind == "link_reset":
                resets.append(t)
            elif kind == "packet_dropped" and e.get("reason") == "reset" and resets:
                flushed[len(resets) - 1] = flushed.get(len(resets) - 1, 0) + 1
            elif kind == "packet_discarded" and e.get("reason") == "header_compression" and resets:
                discards.setdefault(len(resets) - 1, []).append(e)
    findings = []
    for i, lost in sorted(discards.items()):
        start, end = resets[i], lost[-1]["t_ns"] / 1e9
        flows = sorted({e["flow"] for e in lost if e.get("flow") is not None})
        findings.append(
            {
                "kind": "header_compression_failure",
                "connection": flows[0] if flows else 0,
                "direction": "a_to_b" if lost[0]["dir"] == "down" else "b_to_a",
                "start_s": start,
                "end_s": end,
                "cost_s": end - start,
                "throughput_share": 0.0,
                "evidence": [],
                # The discarded segments (source, IP ID, time), turned into capture frames.
                "_ids": [
                    ("198.18.0.1" if e["dir"] == "down" else "198.18.1.1", e["ip_id"], e["t_ns"] / 1e9)
                    for e in lost[:20]
                    if e.get("ip_id") is not None
                ],
                "explanation": (
                    f"A link reset at {start:.2f} s flushed {flushed.get(i, 0)} packet(s) from the link layer. "
                    f"The VJ header decompressor never learnt of them, rebuilt wrong headers from its stale state, "
                    f"and {len(lost)} compressed segments after them were discarded (a whole window) until a "
                    "retransmission, sent uncompressed, resynchronised it; the receiver stayed silent, so the "
                    "sender had to time out."
                ),
                "fix": (
                    "Make the link layer more persistent (a larger RLP N2) so that it does not reset; or repair "
                    "the compression context after a reset (send the next packets uncompressed: RFC 2507 and "
                    "ROHC do), or turn header compression off on links that reset."
                ),
                "details": {
                    "link_resets": 1.0,
                    "packets_flushed": float(flushed.get(i, 0)),
                    "segments_discarded": float(len(lost)),
                },
            }
        )
    return findings
