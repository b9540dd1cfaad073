"""What a handoff cost a TCP flow, read from a simulation bundle (issue 14 item 3).

The bundle of a `[network.roaming]` scenario has the handoffs and Mobile IP
registrations in link.jsonl (docs/link-log.md) and, when the flow's receiver is in
`network.captures`, what reached it. :func:`cost` looks at the receiver's first handoff
and the `before_s` + `after_s` seconds around it: the new bytes the receiver got in
that window (goodput), the longest time in it without any data arriving (the stall:
the time the handoff cost), and how long after the handoff the node was registered
again (Mobile IP), if it was.

    >>> c = cost("runs/mip")                          # doctest: +SKIP
    >>> c.stall_s, c.registered_after_s               # doctest: +SKIP
    (1.51, 0.906)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .pcapio import decode_tcp, read_records

@dataclass(frozen=True)
class HandoffCost:
    """One handoff and what it cost the flow (times in seconds from the run's start)."""

    handoff_s: float
    registered_after_s: float | None
    goodput_bps: float
    stall_s: float


def cost(bundle: str | os.PathLike[str], flow: int = 0, before_s: float = 1.0, after_s: float = 4.0) -> HandoffCost:
    """The cost of the first handoff of flow `flow`'s receiver (see the module
    documentation). Raises ValueError when the bundle has no handoff of that node or no
    capture at it."""
    root = Path(bundle)
    meta = json.loads((root / "meta.json").read_text())
    node = meta["flows"][flow]["to"]
    log = [json.loads(line) for line in (root / "link.jsonl").read_text().splitlines()]
    handoffs = [e["t_ns"] for e in log if e["kind"] == "handoff" and e["node"] == node]
    if not handoffs:
        raise ValueError(f"{root}: no handoff of {node!r} in link.jsonl")
    t_h = handoffs[0]
    replies = [
        e["t_ns"] for e in log if e["kind"] == "registration_reply" and e["node"] == node and e["t_ns"] >= t_h
    ]
    captures = {v["node"]: v["file"] for v in meta["vantage_points"] if v["linktype"] == 101}
    if node not in captures:
        raise ValueError(f"{root}: no capture at {node!r} (add it to network.captures)")
    epoch = meta["clock"]["epoch_ns"]
    start, end = t_h - int(before_s * 1e9), t_h + int(after_s * 1e9)
    highest = None
    new_bytes = 0
    arrivals = [start]
    for rec in read_records(root / captures[node]):
        tcp = decode_tcp(rec)
        if tcp is None or tcp.payload_len == 0:
            continue
        t = rec.ts_ns - epoch
        top = tcp.seq + tcp.payload_len
        if start <= t < end:
            arrivals.append(t)
            if highest is not None and top > highest:
                new_bytes += top - max(highest, tcp.seq)
        highest = top if highest is None else max(highest, top)
    arrivals.append(end)
    stall = max(b - a for a, b in zip(arrivals, arrivals[1:]))
    return HandoffCost(
        handoff_s=t_h / 1e9,
        registered_after_s=(replies[0] - t_h) / 1e9 if replies else None,
        goodput_bps=new_bytes * 8 / (before_s + after_s),
        stall_s=stall / 1e9,
    )
