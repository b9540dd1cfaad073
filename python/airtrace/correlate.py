"""Correlate captures of one run taken at several points (sender, receiver, sniffer, link).

    >>> from airtrace.correlate import correlate
    >>> c = correlate({"sender": "a.pcap", "receiver": "b.pcap"})   # doctest: +SKIP
    >>> c.clocks        # offset and drift of each capture against the reference
    >>> c.packets       # one row per packet: time at each point, one-way delays, where it was lost

Packets are matched by their TCP/IP identity: addresses, ports, IP ID, sequence and
acknowledgement numbers, flags, payload length and a CRC-32 of the payload; the n-th
copy of an identical packet at one point matches the n-th at another.

Clocks: capture O against the reference R, with d = t_O - t_R for each matched packet,
follows d = offset + drift * (t_R - t0) + delay (delay >= 0 for packets R saw first,
<= 0 for the other direction). The drift is the slope of the delay *envelope*: the line
that supports the lower convex hull of (t_R, d) of the packets R saw first at the mean
time (the linear-programming estimator of Moon, Skelly and Towsley, 1999), and the upper
hull of the other direction; the two slopes are averaged. The offset assumes the
smallest packets' minimum one-way delay is the same both ways (as NTP does): it is the
midpoint of the minimum detrended d of one direction and the maximum of the other. With
packets seen one way only, the offset absorbs that way's minimum delay (reported in
`clocks.method`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, Sequence

from airtrace import bundlefiles, pcapio

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

KEY = ["ip_src", "ip_dst", "src_port", "dst_port", "ip_id", "seq", "ack", "flags", "payload_len", "payload_crc"]


def capture_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The TCP packets of a capture with their matching key, time stamp (ns) and SACK blocks."""
    import pandas as pd

    rows = []
    for rec in pcapio.read_records(path):
        t = pcapio.decode_tcp(rec)
        if t is None:
            continue
        rows.append(
            (t.ip_src, t.ip_dst, t.src_port, t.dst_port, t.ip_id, t.seq, t.ack, t.flags, t.payload_len,
             t.payload_crc, rec.ts_ns, t.sack)
        )
    df = pd.DataFrame(rows, columns=[*KEY, "ts_ns", "sack"])
    df["ts_ns"] = df["ts_ns"].astype("int64")
    df["copy"] = df.groupby(KEY, sort=False).cumcount()
    return df


@dataclass
class Clock:
    """How a capture's clock relates to the reference: t_other = t_ref + offset + drift * (t_ref - t0)."""

    name: str
    offset_s: float
    drift: float  # dimensionless (50 ppm = 50e-6)
    t0_ns: int
    pairs: int
    method: str

    def to_reference_ns(self, t_ns: np.ndarray) -> np.ndarray:
        """Reference-clock times (ns, float) of this capture's time stamps."""
        import numpy as np

        rel = (np.asarray(t_ns, dtype=np.int64) - self.t0_ns).astype(np.float64)
        return self.t0_ns + (rel - self.offset_s * 1e9) / (1.0 + self.drift)


@dataclass
class Correlation:
    """The result of `correlate`: clocks per capture and one row per packet."""

    reference: str
    names: list[str]
    clocks: dict[str, Clock]
    packets: pd.DataFrame
    paths: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    @property
    def clock_table(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(
            [
                {"capture": c.name, "offset_s": c.offset_s, "drift_ppm": c.drift * 1e6, "pairs": c.pairs, "method": c.method}
                for c in self.clocks.values()
            ]
        ).set_index("capture")

    def lost(self) -> pd.DataFrame:
        """Packets that some point downstream never saw, with the two points they vanished between."""
        return self.packets[self.packets["lost_between"].notna()]


def _hull_support(t: np.ndarray, d: np.ndarray, lower: bool) -> tuple[float, float]:
    """(slope, intercept) of the line supporting the lower (upper) hull of (t, d) at mean(t)."""
    import numpy as np

    if len(t) < 2 or np.ptp(t) == 0:
        return 0.0, float(d.min() if lower else d.max())
    order = np.lexsort((d, t) if lower else (-d, t))
    ts, ds = t[order], d[order]
    sign = 1.0 if lower else -1.0
    hull: list[int] = []
    for i in range(len(ts)):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            cross = (ts[b] - ts[a]) * (ds[i] - ds[a]) - (ds[b] - ds[a]) * (ts[i] - ts[a])
            if sign * cross <= 0:
                hull.pop()
            else:
                break
        hull.append(i)
    tm = float(t.mean())
    for a, b in zip(hull, hull[1:]):
        if ts[a] <= tm <= ts[b] and ts[b] > ts[a]:
            slope = (ds[b] - ds[a]) / (ts[b] - ts[a])
            return float(slope), float(ds[a] - slope * ts[a])
    return 0.0, float(d.min() if lower else d.max())


def estimate_clock(name: str, ref: pd.DataFrame, other: pd.DataFrame, t0_ns: int) -> Clock:
    """Offset and drift of `other` against `ref` from the packets both captured."""
    m = ref.merge(other, on=[*KEY, "copy"], suffixes=("_r", "_o"))
    if m.empty:
        return Clock(name, 0.0, 0.0, t0_ns, 0, "no common packets: left as it is")
    clock = _fit(name, m, t0_ns)
    if len(m) < 0.1 * min(len(ref), len(other)):
        clock.method += f"; only {len(m)} of {min(len(ref), len(other))} packets matched: the captures may not be of one run"
    return clock


def _fit(name: str, m: pd.DataFrame, t0_ns: int) -> Clock:
    import numpy as np

    tr = (m["ts_ns_r"].to_numpy() - t0_ns) / 1e9
    d = (m["ts_ns_o"].to_numpy() - m["ts_ns_r"].to_numpy()) / 1e9
    groups = m.groupby(["ip_src", "ip_dst"], sort=False, observed=True).indices
    # Which way does each direction go: d larger for packets the reference saw first.
    medians = {k: float(np.median(d[idx])) for k, idx in groups.items()}
    directions = sorted(groups, key=lambda k: medians[k])
    fwd = directions[-1]  # reference upstream
    rev = directions[0] if len(directions) > 1 and medians[directions[0]] < medians[fwd] else None
    slopes = [_hull_support(tr[groups[fwd]], d[groups[fwd]], lower=True)[0]]
    if rev is not None:
        slopes.append(_hull_support(tr[groups[rev]], d[groups[rev]], lower=False)[0])
    drift = float(np.mean(slopes))
    resid = d - drift * tr
    low = float(resid[groups[fwd]].min())
    if rev is None:
        return Clock(name, low, drift, t0_ns, len(m), "one direction only: the offset includes its minimum delay")
    high = float(resid[groups[rev]].max())
    return Clock(name, (low + high) / 2, drift, t0_ns, len(m), "delay envelopes of both directions, symmetric minimum delay")


def correlate(
    captures: Mapping[str, str | os.PathLike[str]] | Sequence[str | os.PathLike[str]],
    *,
    reference: str | None = None,
    align: bool = True,
) -> Correlation:
    """Match the packets of several captures of one run and put them on one clock.

    `captures`: {name: path} or a list of paths (named by file stem). `reference`: the
    capture whose clock the others are aligned to (the first by default). `align=False`
    keeps every time stamp as it is (captures known to share one clock, as a bundle's).
    """
    import numpy as np
    import pandas as pd

    if not isinstance(captures, Mapping):
        captures = {os.path.splitext(os.path.basename(os.fspath(p)))[0]: p for p in captures}
    names = list(captures)
    reference = reference or names[0]
    tables = {n: capture_table(p) for n, p in captures.items()}
    ref = tables[reference]
    t0 = int(ref["ts_ns"].min()) if len(ref) else 0
    clocks: dict[str, Clock] = {}
    for n in names:
        if n == reference or not align:
            clocks[n] = Clock(n, 0.0, 0.0, t0, len(tables[n]), "reference" if n == reference else "not aligned")
        else:
            clocks[n] = estimate_clock(n, ref, tables[n], t0)
    # One row per packet identity: the corrected time at each point (s since t0).
    merged: pd.DataFrame | None = None
    for n in names:
        tab = tables[n]
        part = tab[[*KEY, "copy"]].copy()
        part[f"t_{n}"] = (clocks[n].to_reference_ns(tab["ts_ns"].to_numpy()) - t0) / 1e9
        merged = part if merged is None else merged.merge(part, on=[*KEY, "copy"], how="outer")
    assert merged is not None
    tcols = [f"t_{n}" for n in names]
    merged = merged.sort_values(tcols[0] if len(names) == 1 else tcols, na_position="last", kind="stable")
    merged["first_seen"] = merged[tcols].min(axis=1)
    merged = merged.sort_values("first_seen", kind="stable").reset_index(drop=True)
    # Order the points along each direction's path (by mean time of the packets all saw).
    paths: dict[tuple[str, str], list[str]] = {}
    lost = pd.Series([None] * len(merged), dtype=object)
    for (src, dst), idx in merged.groupby(["ip_src", "ip_dst"], sort=False).indices.items():
        sub = merged.loc[idx, tcols]
        full = sub.dropna()
        base = full if len(full) else sub
        order = sorted(names, key=lambda n: float(np.nanmean(base[f"t_{n}"])) if base[f"t_{n}"].notna().any() else 0.0)
        order = _bundle_order([n for n in order if sub[f"t_{n}"].notna().any()])
        paths[(src, dst)] = order
        seen = sub[[f"t_{n}" for n in order]].notna().to_numpy()
        for a, b in zip(range(len(order)), range(1, len(order))):
            gone = seen[:, a] & ~seen[:, b:].any(axis=1)
            where = np.flatnonzero(gone)
            lost.iloc[idx[where]] = f"{order[a]} -> {order[b]}"
        for a in range(len(order) - 1):
            col = f"delay_{order[a]}_{order[a + 1]}"
            if col not in merged:
                merged[col] = np.nan
            merged.loc[idx, col] = sub[f"t_{order[a + 1]}"] - sub[f"t_{order[a]}"]
    merged["lost_between"] = lost.where(lost.notna(), None)
    return Correlation(reference, names, clocks, merged, paths)


def _bundle_order(order: list[str]) -> list[str]:
    """Bundle points share one clock, so link_in ties with the sending host's capture and
    link_out with the receiving one's: put the link points between the two hosts."""
    link = [n for n in ("link_in", "link_out") if n in order]
    hosts = [n for n in order if n not in link]
    if not link or len(hosts) > 2 or not set(hosts) <= {"sender", "receiver"}:
        return order
    return hosts[:1] + link + hosts[1:]


def correlate_bundle(bundle: str | os.PathLike[str]) -> Correlation:
    """Correlate every capture of a bundle. They share one clock (meta.json), so none is shifted."""
    root = os.fspath(bundle)
    meta = bundlefiles.read_meta(root)
    caps = bundlefiles.vantage_points(root, meta)
    clock = meta.get("clock")
    note = clock.get("note") if isinstance(clock, dict) else None
    shared = "every vantage point shares" in str(note) or meta.get("source") == "simulation"
    corr = correlate(caps, align=not shared)
    log = os.path.join(root, "link.jsonl")
    if os.path.exists(log):
        _join_link_fate(corr, log, meta)
    return corr


def _join_link_fate(corr: Correlation, log: str, meta: dict) -> None:  # type: ignore[type-arg]
    """Add `link_fate` (the link log's last word on each packet: delivered, lost, dropped:reason)."""
    import pandas as pd

    fate: dict[tuple[str, int], str] = {}
    for r in bundlefiles.records(log, bundlefiles.LINK_LOG):
        if r.get("ip_id") is None or not r["kind"].startswith("packet_"):
            continue
        what = r["kind"][len("packet_") :]
        if r.get("reason"):
            what += f":{r['reason']}"
        fate[(r["dir"], r["ip_id"])] = what
    hosts = meta.get("hosts")
    host_a = hosts.get("a") if isinstance(hosts, dict) else None
    dirs = ["down" if src == host_a else "up" for src in corr.packets["ip_src"]]
    corr.packets["link_fate"] = pd.Series(
        [fate.get((d, int(i))) for d, i in zip(dirs, corr.packets["ip_id"])], index=corr.packets.index, dtype=object
    )
