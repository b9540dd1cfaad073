"""`airtrace.diagnose`: name the cause of a slow transfer, show the evidence, say the fix.

    >>> import airtrace
    >>> for f in airtrace.diagnose("capture.pcapng"):                  # doctest: +SKIP
    ...     print(f.kind, f.start_s, f.cost_s, f.explanation)
    >>> airtrace.diagnose("runs/gsm")                                   # doctest: +SKIP

A capture is diagnosed by the Rust detectors (crates/airtrace-diagnose) in the
analyzer's single pass. A bundle (the directory a simulation writes) is diagnosed
from its sender capture, plus what only its other files can show: the 802.11 layer
from its `air` capture (collisions, corrupted frames, MAC retries), and from its link
log the link resets and the header-decompression failures after them. Evidence
always names frames of the sender capture. docs/diagnosis.md lists every kind.

Every finding is a `Finding` (airtrace.finding), built once from the Rust JSON, or
here for the findings only a bundle's files can show.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airtrace import _core, bundlefiles, packet_table
from airtrace.bundlefiles import BundleError, DamagedInput
from airtrace.finding import Finding

if TYPE_CHECKING:
    import pandas as pd

#: Columns of a findings table, in order: the fields of a Finding.
COLUMNS = tuple(f.name for f in fields(Finding))


#: The packets columns that evidence frames are matched across captures by.
EVIDENCE_COLUMNS = ["frame", "time", "time_rel", "ip_src", "ip_id"]
#: Kinds that only a capture of the 802.11 frames (radiotap) can show.
AIR_KINDS = frozenset({"data_ack_collisions", "bad_fcs", "mac_retries", "rate_adaptation_thrash"})


class DiagnosisError(ValueError):
    """Nothing could be read: the message is one line naming the file and place."""


def diagnose(path: str | os.PathLike[str]) -> list[Finding]:
    """The findings for a capture file or a bundle directory, in order of connection
    and start time, each with `file` the `path` given. A finding the self-check left out
    (a value that cannot be true) is named in a warning."""
    given = os.fspath(path)
    return [replace(f, file=given) for f in _diagnose(Path(path))]


def _diagnose(path: Path) -> list[Finding]:
    """`diagnose`, the findings without their `file`."""
    if path.is_dir():
        return _diagnose_bundle(path)
    try:
        diagnosis = json.loads(_core.diagnose(os.fspath(path)))
    except ValueError as e:
        raise DiagnosisError(str(e)) from None
    for line in diagnosis["warnings"]:
        warnings.warn(line, stacklevel=3)
    return [Finding.from_dict(f) for f in diagnosis["findings"]]


def findings_frame(findings: list[Finding]) -> pd.DataFrame:
    """The findings as a pandas DataFrame, one row each, a column per field of Finding
    (`evidence` a list, `details` a dict, as in the JSON)."""
    import pandas as pd

    return pd.DataFrame([f.to_dict() | {"file": f.file} for f in findings], columns=list(COLUMNS))


def diagnosed_capture(path: str | os.PathLike[str]) -> Path:
    """The capture whose frames and connections the findings for `path` refer to (and
    that `airtrace.read` reads): the file itself, or a bundle's sender capture (else its
    link_in or receiver capture); in a network's bundle, the capture at the first flow's
    sending node, else at its receiving node. DiagnosisError for a directory that is no
    bundle or a bundle without any of them."""
    path = Path(path)
    if not path.is_dir():
        return path
    return _bundle_capture(path, _bundle_meta(path))


def _bundle_capture(bundle: Path, meta: dict[str, Any]) -> Path:
    """`diagnosed_capture` of a bundle whose meta.json is `meta`."""
    names = _first_flow_nodes(meta) or ["sender", "link_in", "receiver"]
    found = next((bundle / f"{v}.pcap" for v in names if (bundle / f"{v}.pcap").is_file()), None)
    if found is None:
        raise DiagnosisError(f"{bundle}: the bundle has no capture (scenario `captures = []`)")
    return found


def _bundle_meta(bundle: Path) -> dict[str, Any]:
    """The bundle's meta.json; {} (with a warning) when it cannot be read;
    DiagnosisError when the directory has none (it is no bundle)."""
    if not (bundle / "meta.json").is_file():
        raise DiagnosisError(f"{bundle}: a directory, but not a bundle (no meta.json)")
    try:
        return bundlefiles.read_meta(bundle)
    except BundleError as e:
        warnings.warn(f"{e}; diagnosing without it", DamagedInput)
        return {}


def _network_flows(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """The flows of a network's bundle (meta.json's `flows` with their `from` and `to`
    nodes); [] for a one-link bundle or an unreadable meta.json."""
    if not meta.get("nodes"):
        return []
    flows = meta.get("flows")
    return [f for f in flows if isinstance(f, dict) and "from" in f and "to" in f] if isinstance(flows, list) else []


def _first_flow_nodes(meta: dict[str, Any]) -> list[str]:
    """A network bundle's first flow's sending and receiving nodes; [] otherwise."""
    flows = _network_flows(meta)
    return [flows[0]["from"], flows[0]["to"]] if flows else []


#: The pcap link type of radiotap 802.11 captures.
LINKTYPE_IEEE802_11_RADIOTAP = 127


def _air_capture(bundle: Path, meta: dict[str, Any]) -> Path | None:
    """The bundle's 802.11 capture: a one-link bundle's `air.pcap`; in a network's, the
    air capture at the first flow's sending node, else at its receiving node, else the
    first one meta.json lists (one radio's view is enough: the others see the same
    collisions)."""
    if (bundle / "air.pcap").is_file():
        return bundle / "air.pcap"
    points = meta.get("vantage_points")
    if not isinstance(points, list):
        return None
    air = {
        p["node"]: bundle / p["file"]
        for p in points
        if isinstance(p, dict) and p.get("linktype") == LINKTYPE_IEEE802_11_RADIOTAP
        and isinstance(p.get("node"), str) and isinstance(p.get("file"), str)
    }
    found = [air[n] for n in _first_flow_nodes(meta) if n in air] + list(air.values())
    return next((f for f in found if f.is_file()), None)


def _diagnose_bundle(bundle: Path) -> list[Finding]:
    meta = _bundle_meta(bundle)
    capture = _bundle_capture(bundle, meta)
    findings = _diagnose(capture)
    unplaced = []
    air = _air_capture(bundle, meta)
    if air is not None:
        unplaced.extend(_air_findings(air))
    log = bundle / "link.jsonl"
    if log.is_file():
        hc = _header_compression_failures(log)
        shared = _shares([u.finding for u in hc], bundle)
        unplaced.extend(replace(u, finding=f) for u, f in zip(hc, shared))
    findings.extend(_as_capture_frames(unplaced, capture))
    findings.extend(_shares(_route_failures(bundle, meta, findings, capture), bundle))
    findings.extend(_shares(_handoffs(bundle, meta, findings, capture), bundle))
    findings.sort(key=lambda f: (f.connection, f.start_s, f.kind))
    return findings


@dataclass(frozen=True)
class _Unplaced:
    """A finding whose evidence is still to be found in the bundle's capture."""

    #: The finding, its evidence empty.
    finding: Finding
    #: The evidence packets: (source address, IP ID, time s), to match in the capture.
    ids: list[tuple[str, int, float]]
    #: The first frame time of the capture the finding was timed from; None when it was
    #: timed from the bundle's capture.
    first_frame_time: Any = None


def _air_findings(air: Path) -> list[_Unplaced]:
    """The 802.11-layer findings of the sniffer's capture, timed from its first frame
    (for `_as_capture_frames` to move them onto the sender capture's axis), their
    evidence as (source, IP ID, time) to match there."""
    try:
        found = [f for f in _diagnose(air) if f.kind in AIR_KINDS]
    except DiagnosisError as e:
        warnings.warn(f"{e}; its 802.11 findings left out", DamagedInput)
        return []
    if not found:
        return []
    packets = packet_table.packets(air, EVIDENCE_COLUMNS).set_index("frame")
    unplaced = []
    for f in found:
        rows = packets.loc[[e for e in f.evidence if e in packets.index]].dropna(subset=["ip_id"])
        ids = [(r.ip_src, int(r.ip_id), float(r.time_rel)) for r in rows.itertuples()]
        unplaced.append(_Unplaced(replace(f, evidence=()), ids, packets["time"].iloc[0]))
    return unplaced


def _as_capture_frames(findings: list[_Unplaced], capture: Path) -> list[Finding]:
    """The findings with their evidence packets (source address, IP ID, time) as frame
    numbers of the bundle's capture, matched by source and IP ID (the nearest in time
    when an IP ID repeats). Findings timed from another capture's first frame move onto
    this one's time axis: the bundle's captures share one clock, their first frames
    differ by a backoff. The frames are sorted."""
    if not findings:
        return []
    packets = packet_table.packets(capture, EVIDENCE_COLUMNS)
    placed = []
    for u in findings:
        start = u.first_frame_time
        shift = 0.0 if start is None else (start - packets["time"].iloc[0]).total_seconds()
        frames = []
        for src, ip_id, t in u.ids:
            t += shift
            match = packets[(packets["ip_src"] == src) & (packets["ip_id"] == ip_id)]
            if len(match):
                nearest = (match["time_rel"] - t).abs().idxmin()
                frames.append(int(match.loc[nearest, "frame"]))
        # In capture order, each once, as the Rust findings give them (issue 17 item 1:
        # the air findings' frames came in the sniffer's pairing order, data then ACK).
        f = u.finding
        placed.append(replace(f, start_s=f.start_s + shift, end_s=f.end_s + shift, evidence=tuple(sorted(set(frames)))))
    return placed


def _shares(findings: list[Finding], bundle: Path) -> list[Finding]:
    """The findings with the `throughput_share` of each from the flow's duration in
    summary.json (as they are when it says none)."""
    summary = bundle / "summary.json"
    if not summary.is_file() or not findings:
        return findings
    try:
        flows = bundlefiles.read_object(summary).get("flows")
    except BundleError as e:
        warnings.warn(f"{e}; throughput shares left at 0", DamagedInput)
        return findings
    flows = [f if isinstance(f, dict) else {} for f in flows] if isinstance(flows, list) else []
    shared = []
    for f in findings:
        flow = flows[f.connection] if f.connection < len(flows) else {}
        start, end = flow.get("start_s"), flow.get("end_s")
        if isinstance(start, (int, float)) and isinstance(end, (int, float)) and end:
            duration = end - start
            f = replace(f, throughput_share=min(f.cost_s / duration, 1.0) if duration > 0 else 0.0)
        shared.append(f)
    return shared


def _header_compression_failures(log: Path) -> list[_Unplaced]:
    """After each link reset, the segments the VJ decompressor threw away (Ludwig et al. §5.3)."""
    resets: list[float] = []
    flushed: dict[int, int] = {}
    discards: dict[int, list[dict[str, Any]]] = {}
    for e in bundlefiles.records(log, bundlefiles.LINK_LOG):
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
        # The discarded segments (source, IP ID, time), turned into capture frames.
        ids = [
            ("198.18.0.1" if e["dir"] == "down" else "198.18.1.1", e["ip_id"], e["t_ns"] / 1e9)
            for e in lost[:20]
            if e.get("ip_id") is not None
        ]
        found = Finding(
            kind="header_compression_failure",
            connection=flows[0] if flows else 0,
            direction="a_to_b" if lost[0]["dir"] == "down" else "b_to_a",
            start_s=start,
            end_s=end,
            cost_s=end - start,
            throughput_share=0.0,
            evidence=(),
            explanation=(
                f"A link reset at {start:.2f} s flushed {flushed.get(i, 0)} packet(s) from the link layer. "
                f"The VJ header decompressor never learnt of them, rebuilt wrong headers from its stale state, "
                f"and {len(lost)} compressed segments after them were discarded (a whole window) until a "
                "retransmission, sent uncompressed, resynchronised it; the receiver stayed silent, so the "
                "sender had to time out."
            ),
            fix=(
                "Make the link layer more persistent (a larger RLP N2) so that it does not reset; or repair "
                "the compression context after a reset (send the next packets uncompressed: RFC 2507 and "
                "ROHC do), or turn header compression off on links that reset."
            ),
            details={
                "link_resets": 1.0,
                "packets_flushed": float(flushed.get(i, 0)),
                "segments_discarded": float(len(lost)),
            },
        )
        findings.append(_Unplaced(found, ids))
    return findings


#: How long before a timeout episode a route event may come and still be its cause, s.
ROUTE_LEAD_S = 1.0


def _capture_start_s(bundle: Path, meta: dict[str, Any], capture: Path, what: str) -> float | None:
    """The simulated time of the capture's first packet, s: link.jsonl's and
    routes.jsonl's times less this are the findings' times. None (with a warning that
    `what` is left out) when the bundle's clock cannot be read."""
    first = packet_table.packets(capture, ["time"])["time"].iloc[0]
    try:
        epoch = bundlefiles.epoch_ns(bundle, meta)
    except BundleError as e:
        warnings.warn(f"{e}; {what} left out", DamagedInput)
        return None
    return float(first.value / 1e9 - epoch / 1e9)


#: How long after a handoff its silence is looked for, s.
HANDOFF_WINDOW_S = 5.0
#: The shortest silence of the receiver's ACKs that makes a handoff a finding, s
#: (Linux's smallest retransmission timeout).
HANDOFF_SILENCE_S = 0.2


def _handoffs(bundle: Path, meta: dict[str, Any], findings: list[Finding], capture: Path) -> list[Finding]:
    """Handoffs of one of the first flow's ends (`handoff` in link.jsonl; with Mobile
    IP, the registration after it) followed by a silence of the receiver's ACKs and
    retransmissions: the move between access points cost that time, not congestion.
    The time is a timeout finding's when one spans the silence (counted once, in
    `explains_timeout_s`), else the silence's."""
    flows = _network_flows(meta)
    log = bundle / "link.jsonl"
    if not flows or not log.is_file():
        return []
    ends = (flows[0]["from"], flows[0]["to"])
    handoffs: list[dict[str, Any]] = []
    later: list[dict[str, Any]] = []
    for e in bundlefiles.records(log, bundlefiles.LINK_LOG):
        if e["kind"] == "handoff" and e.get("node") in ends:
            handoffs.append(e)
        elif e["kind"] in ("association", "registration_reply") and e.get("node") in ends:
            later.append(e)
        elif e["kind"] == "packet_dropped" and e.get("reason") == "not_associated" and e.get("flow") == 0:
            later.append(e)
    if not handoffs:
        return []
    t0 = _capture_start_s(bundle, meta, capture, "handoffs")
    if t0 is None:
        return []
    packets = packet_table.packets(capture, ["frame", "time_rel", "conn", "dir", "retransmission"])
    flow = packets[packets["conn"] == 0]
    acks = flow[flow["dir"] == 1]["time_rel"].to_numpy(dtype=float)
    resent = flow[(flow["dir"] == 0) & flow["retransmission"]]
    found = []
    for h in handoffs:
        t_h = h["t_ns"] / 1e9 - t0
        # The longest silence of the receiver that begins in the window.
        times = [t for t in acks if t_h - HANDOFF_SILENCE_S <= t <= t_h + HANDOFF_WINDOW_S]
        gaps = [(b - a, a, b) for a, b in zip(times, times[1:])]
        if not gaps:
            continue
        silence, quiet_from, quiet_to = max(gaps)
        frames = resent[(resent["time_rel"] >= quiet_from) & (resent["time_rel"] <= quiet_to + 0.001)]
        if silence < HANDOFF_SILENCE_S or frames.empty:
            continue
        spans = [
            f for f in findings
            if f.kind == "timeout_backoff" and f.connection == 0 and f.direction == "a_to_b"
            and f.start_s <= quiet_to and f.end_s >= quiet_from
        ]
        after = [e for e in later if t_h <= e["t_ns"] / 1e9 - t0 <= quiet_to]
        joined = next((e["t_ns"] / 1e9 - t0 for e in after if e["kind"] == "association" and e["node"] == h["node"]), None)
        registered = next((e["t_ns"] / 1e9 - t0 for e in after if e["kind"] == "registration_reply"), None)
        dropped = sum(e["kind"] == "packet_dropped" for e in after)
        parts = [f"{h['node']} handed off from {h.get('from_peer')} to {h.get('peer')} at {t_h:.2f} s ({h.get('reason')})"]
        details = {"handoffs": 1.0, "not_associated_drops": float(dropped), "silence_s": silence}
        if joined is not None:
            parts.append(f"it was off the air {(joined - t_h) * 1e3:.0f} ms")
            details["handoff_gap_s"] = joined - t_h
        if dropped:
            parts.append(f"{dropped} packet(s) of the flow were dropped at the access point it left")
        if registered is not None and joined is not None:
            parts.append(
                f"Mobile IP registered it through the new agent {registered - joined:.2f} s after it associated "
                "(until then its packets still went home)"
            )
            details["registration_s"] = registered - joined
        if spans:
            details["explains_timeout_s"] = sum(f.cost_s for f in spans)
        found.append(
            Finding(
                kind="handoff",
                connection=0,
                direction="a_to_b",
                start_s=t_h,
                end_s=quiet_to,
                # A timeout finding's time is counted there, once.
                cost_s=0.0 if spans else silence,
                throughput_share=0.0,
                evidence=tuple(int(x) for x in frames["frame"].to_numpy()[:20]),
                explanation=(
                    "; ".join(parts)
                    + f". The receiver's ACKs stopped for {silence:.2f} s and {len(frames)} segment(s) were sent "
                    "again: TCP took the silence and the loss burst for congestion (a retransmission timeout and a "
                    "slow start)."
                ),
                fix=(
                    "Detect the move sooner: agent advertisements more often (`advertisement_interval` in "
                    "[network.mobile_ip]) or a solicitation on association (`solicit = true`), a shorter handoff "
                    "gap; or hand the old access point's packets over and warn the sender (a hinted handoff) so "
                    "that TCP neither loses a window nor backs off its timer."
                ),
                details=details,
            )
        )
    return found


def _route_failures(bundle: Path, meta: dict[str, Any], findings: list[Finding], capture: Path) -> list[Finding]:
    """Timeouts of the first flow's sender that line up with route errors it received
    or packets of the flow dropped for want of a route (Holland & Vaidya §4.3): the
    routing, not congestion, cost that time. Needs a network bundle with routes.jsonl."""
    flows = _network_flows(meta)
    routes_log = bundle / "routes.jsonl"
    if not flows or not routes_log.is_file():
        return []
    sender = flows[0]["from"]
    events: list[tuple[float, str]] = []
    for e in bundlefiles.records(routes_log, bundlefiles.ROUTES_LOG):
        link = e.get("link")
        told = isinstance(link, dict) and link.get("tell") == sender
        if e["event"] == "error_received" and e["node"] == sender and told:
            events.append((e["t_ns"] / 1e9, "route_error"))
    log = bundle / "link.jsonl"
    if log.is_file():
        for e in bundlefiles.records(log, bundlefiles.LINK_LOG):
            no_route = e.get("reason") in ("no_route", "send_buffer_timeout")
            if e["kind"] == "packet_dropped" and e.get("flow") == 0 and no_route:
                events.append((e["t_ns"] / 1e9, e["reason"]))
    if not events:
        return []
    t0 = _capture_start_s(bundle, meta, capture, "route failures")
    if t0 is None:
        return []
    found = []
    for f in findings:
        if f.kind != "timeout_backoff" or f.connection != 0 or f.direction != "a_to_b":
            continue
        start, end = f.start_s + t0, f.end_s + t0
        near = [(t, what) for t, what in events if start - ROUTE_LEAD_S <= t <= end]
        if not near:
            continue
        errors = sum(what == "route_error" for _, what in near)
        drops = len(near) - errors
        found.append(
            Finding(
                kind="route_failure",
                connection=0,
                direction="a_to_b",
                start_s=min(t for t, _ in near) - t0,
                end_s=f.end_s,
                # The timeout episode's time is timeout_backoff's: counted once
                # (docs/diagnosis.md, `explains_timeout_s`).
                cost_s=0.0,
                throughput_share=0.0,
                evidence=f.evidence,
                explanation=(
                    f"Retransmission timeouts from {f.start_s:.2f} s to {f.end_s:.2f} s "
                    f"came with {errors} route error(s) reaching the sender and {drops} packet(s) of the flow "
                    "dropped for want of a route: a route broke (nodes moved apart, or the MAC gave up on a link), "
                    "and TCP took the silence for congestion and backed off its timer while the routing repaired "
                    "the route or served stale ones from its caches."
                ),
                fix=(
                    "Tell the sender of route failures (ELFN, `elfn_probe` in [flow.tcp]) so that it stands by and "
                    "probes instead of backing off; keep route caches fresher (a cache timeout, no replies from "
                    "caches, negative caches)."
                ),
                details={
                    "route_errors": float(errors),
                    "no_route_drops": float(drops),
                    "explains_timeout_s": f.cost_s,
                },
            )
        )
    return found
