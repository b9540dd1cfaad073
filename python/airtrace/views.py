"""The data behind the plots and the report: a run (a bundle, or capture files) on one
time axis, and the series each view draws, computed once for matplotlib and the browser.

    >>> run = load("bundle/")                 # or load(["sender.pcap", "receiver.pcap"])
    >>> conn = run.main_connection()
    >>> layers = multilayer(run, conn)        # {name: Series}

Times are seconds since the run's zero: the bundle's clock epoch (simulated time), or
the first packet of the reference capture. Sequence numbers are bytes relative to the
connection's initial sequence number, as tcptrace and Wireshark show them.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Sequence

from airtrace import bundlefiles

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

DATA_PORT_BASE = 40000  # a bundle's TCP flow i runs from port 40000 + i (docs/bundle.md)


@dataclass
class Series:
    """One drawable series: x (s), y, how to draw it, and optional per-point extras."""

    label: str
    x: np.ndarray
    y: np.ndarray
    style: str = "points"  # points | step | line | vlines (x only) | bars (y..y2)
    color: str = "C0"
    y2: np.ndarray | None = None
    marker: str = "."
    important: bool = False  # never thinned out (retransmissions, timeouts, resets)
    note: str = ""

    def __len__(self) -> int:
        return len(self.x)


@dataclass
class Run:
    """A bundle or a set of captures, with one time zero."""

    captures: dict[str, str]
    bundle: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    clocks: dict[str, Any] = field(default_factory=dict)  # name -> correlate.Clock (captures only)
    base_ns: int = 0

    @property
    def title(self) -> str:
        if self.bundle:
            return f"{self.meta.get('scenario', os.path.basename(self.bundle.rstrip('/')))} (seed {self.meta.get('seed', '?')})"
        return ", ".join(os.path.basename(p) for p in self.captures.values())

    @property
    def sender_name(self) -> str:
        return "sender" if "sender" in self.captures else next(iter(self.captures))

    @property
    def receiver_name(self) -> str | None:
        if "receiver" in self.captures:
            return "receiver"
        names = [n for n in self.captures if n != self.sender_name]
        return names[-1] if names else None

    _packets: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    def packets(self, name: str) -> pd.DataFrame:
        """The analysed packets of one capture, with `t`: seconds on the run's clock."""
        if name not in self._packets:
            from airtrace.trace import AnalysisError, read

            try:
                p = read(self.captures[name]).packets()
            except AnalysisError as e:
                if name == self.sender_name:
                    raise
                # Another capture of the run that cannot be read: the views go on without it.
                warnings.warn(f"{e}; the {name} capture left out", bundlefiles.DamagedInput)
                p = self.packets(self.sender_name).iloc[:0].drop(columns="t")
            ns = p["time"].astype("int64").to_numpy()
            clock = self.clocks.get(name)
            fixed = clock.to_reference_ns(ns) if clock is not None else ns
            p["t"] = (fixed - self.base_ns) / 1e9
            self._packets[name] = p
        return self._packets[name]

    @cached_property
    def connections(self) -> pd.DataFrame:
        from airtrace.trace import read

        return read(self.captures[self.sender_name]).connections

    def main_connection(self) -> int:
        """The connection that moved the most data at the sender."""
        c = self.connections
        if len(c) == 0:
            raise ValueError(f"{self.captures[self.sender_name]}: no TCP connection in the capture")
        total = c["a_to_b.data_bytes"] + c["b_to_a.data_bytes"]
        return int(c.loc[total.idxmax(), "id"])

    def data_dir(self, conn: int) -> int:
        """0 if the connection's data flows a -> b, else 1."""
        row = self.connections.loc[conn]
        return 0 if row["a_to_b.data_bytes"] >= row["b_to_a.data_bytes"] else 1

    def at_receiver(self, conn: int) -> bool:
        """Whether the run's only view of connection `conn` is a capture taken at its data's
        receiver (the analysis' `capture_point`): then what the capture times is the
        receiver's side of the exchange, not the sender's (its RTT samples are the
        receiver's own ACK delay, its bytes in flight are not the sender's window)."""
        return self.receiver_name is None and self.connections.loc[conn].get("capture_point") == "receiver"

    def flow_of(self, conn: int) -> int | None:
        """The bundle flow index of a connection (its tcpstate.jsonl `flow`), if any."""
        if not self.bundle:
            return None
        port = int(str(self.connections.loc[conn, "a"]).rsplit(":", 1)[1])
        return port - DATA_PORT_BASE if port >= DATA_PORT_BASE else None

    def conn_in(self, name: str, conn: int) -> pd.DataFrame:
        """The packets of sender connection `conn` as captured at `name` (matched by ports)."""
        p = self.packets(name)
        if name == self.sender_name:
            return p[p["conn"] == conn]
        row = self.connections.loc[conn]
        a_port, b_port = int(str(row["a"]).rsplit(":", 1)[1]), int(str(row["b"]).rsplit(":", 1)[1])
        m = ((p["src_port"] == a_port) & (p["dst_port"] == b_port)) | ((p["src_port"] == b_port) & (p["dst_port"] == a_port))
        sub = p[m]
        if len(sub) == 0:
            return sub
        # Direction 0 at this capture = the same as the sender's a -> b.
        sub = sub.copy()
        sub["dir"] = (sub["src_port"] != a_port).astype("uint8")
        return sub

    @cached_property
    def link(self) -> pd.DataFrame | None:
        """link.jsonl with `t` in seconds, or None."""
        return self._log("link.jsonl", bundlefiles.LINK_LOG)

    @cached_property
    def routes(self) -> pd.DataFrame | None:
        """routes.jsonl (a network routed by DSR) with `t` in seconds, or None."""
        return self._log("routes.jsonl", bundlefiles.ROUTES_LOG)

    def flow_node(self, conn: int) -> str | None:
        """In a network's bundle, the node the connection's flow sends from."""
        flow = self.flow_of(conn)
        flows = self.meta.get("flows") or []
        if flow is None or not 0 <= flow < len(flows) or not isinstance(flows[flow], dict):
            return None
        node = flows[flow].get("from")
        return node if isinstance(node, str) else None

    @cached_property
    def tcpstate(self) -> pd.DataFrame | None:
        """tcpstate.jsonl with `t` in seconds, or None."""
        return self._log("tcpstate.jsonl", bundlefiles.TCP_STATE_LOG)

    @cached_property
    def summary(self) -> dict[str, Any] | None:
        """summary.json, or None (with a warning if it cannot be read)."""
        path = os.path.join(self.bundle, "summary.json") if self.bundle else None
        if not path or not os.path.exists(path):
            return None
        try:
            return bundlefiles.read_object(path)
        except bundlefiles.BundleError as e:
            warnings.warn(str(e), bundlefiles.DamagedInput)
            return None

    def _log(self, name: str, fields: bundlefiles.Fields) -> pd.DataFrame | None:
        """A log of the bundle with `t` in seconds (its damaged lines skipped, with a
        warning), or None."""
        path = os.path.join(self.bundle, name) if self.bundle else None
        if not path or not os.path.isfile(path):
            return None
        return bundlefiles.frame(path, fields)


def is_bundle(path: str | os.PathLike[str]) -> bool:
    return os.path.isdir(path) and os.path.exists(os.path.join(path, "meta.json"))


def load(source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *, align: bool = True) -> Run:
    """A bundle directory, one capture, or several captures of one run (aligned to the first)."""
    if isinstance(source, (str, os.PathLike)):
        source = [source]
    paths = [os.fspath(s) for s in source]
    if len(paths) == 1 and is_bundle(paths[0]):
        root = paths[0]
        meta = bundlefiles.read_meta(root)
        caps = {name: p for name, p in bundlefiles.vantage_points(root, meta).items() if os.path.exists(p)}
        if not caps:
            raise ValueError(f"{root}: the bundle has no capture (scenario `captures = []`)")
        return Run(caps, bundle=root, meta=meta, base_ns=bundlefiles.epoch_ns(root, meta))
    caps: dict[str, str] = {}
    for p in paths:
        if os.path.isdir(p):
            raise ValueError(f"{p}: a directory, but not a bundle (no meta.json)")
        name = os.path.basename(p).split(".")[0]
        while name in caps:
            name += "'"
        caps[name] = p
    from airtrace.trace import read

    first = read(paths[0]).packets_arrow(columns=["time"]).column("time")
    base = int(first[0].value) if len(first) else 0
    clocks: dict[str, Any] = {}
    if len(paths) > 1 and align:
        from airtrace.correlate import correlate

        clocks = dict(correlate(caps).clocks)
    return Run(caps, clocks=clocks, base_ns=base)


# ---- the series of each view ---------------------------------------------------------


def _np(s: Any) -> np.ndarray:
    import numpy as np

    return np.asarray(s.to_numpy(dtype="float64", na_value=np.nan) if hasattr(s, "to_numpy") else s, dtype="float64")


def tcp_layer(run: Run, name: str, conn: int, role: str) -> dict[str, Series]:
    """Data segments (first byte) and ACKs of connection `conn` at capture `name`."""
    p = run.conn_in(name, conn)
    d = run.data_dir(conn)
    data = p[(p["dir"] == d) & (p["seglen"].fillna(0) > 0)]
    acks = p[(p["dir"] != d) & (p["tcp_flags"].fillna(0).astype(int) & 0x10 > 0)]
    return {
        f"{role}_data": Series(f"{role} data", _np(data["t"]), _np(data["seq_rel"])),
        f"{role}_ack": Series(f"{role} ACKs", _np(acks["t"]), _np(acks["ack_rel"]), style="step"),
    }


def link_layer(run: Run, conn: int, direction: str = "down") -> dict[str, Series]:
    """Link data, link retransmissions (or losses) and resets, placed at the TCP sequence number of
    the packet they carry (found by IP ID in the sender capture) so they line up with TCP's curves."""
    import numpy as np

    link = run.link
    if link is None:
        return {}
    flow = run.flow_of(conn)
    lk = link[link["dir"] == direction]
    if flow is not None and "flow" in lk:
        lk = lk[(lk["flow"] == flow) | lk["flow"].isna()]
    p = run.conn_in(run.sender_name, conn)
    sent = p[p["dir"] == run.data_dir(conn)]
    seq_of = dict(zip(sent["ip_id"].astype("int64"), _np(sent["seq_rel"])))
    out: dict[str, Series] = {}
    frames = lk[lk["kind"].isin(["frame_sent", "frame_retransmitted"])]
    if len(frames):
        # One ARQ frame number space per reset epoch: a retransmission sits where its frame was first sent.
        first = frames["kind"].to_numpy() == "frame_sent"
        nbytes = frames["bytes"].fillna(0).to_numpy(dtype=float)
        resets_t = _np(lk.loc[lk["kind"] == "link_reset", "t"])
        epoch = np.searchsorted(resets_t, _np(frames["t"]), side="right")
        fnum = frames["frame"].fillna(-1).astype(int).to_numpy()
        ipid = frames["ip_id"].fillna(-1).astype(int).to_numpy()
        y_of: dict[tuple[int, int], float] = {}
        within: dict[int, float] = {}
        y = np.full(len(frames), np.nan)
        for i in range(len(frames)):
            key = (int(epoch[i]), int(fnum[i]))
            if first[i] or key not in y_of:
                base = seq_of.get(int(ipid[i]))
                off = within.get(int(ipid[i]), 0.0)
                within[int(ipid[i])] = off + nbytes[i]
                y_of[key] = np.nan if base is None else base + max(0.0, off - 40.0)
            y[i] = y_of[key]
        t = _np(frames["t"])
        out["link_data"] = Series("link frames", t[first], y[first], color="C2")
        out["link_retx"] = Series("link frame retransmissions", t[~first], y[~first], color="C3", marker="x", important=True)
        # On a shared 802.11 channel: the attempts lost because both stations sent in one slot.
        collided = lk[(lk["kind"] == "frame_lost") & (lk["reason"] == "collision")] if "reason" in lk else lk.iloc[:0]
        if len(collided):
            yc = np.array([seq_of.get(int(i), np.nan) for i in collided["ip_id"].fillna(-1).astype(int)])
            out["link_collision"] = Series(
                "link: collisions (data and ACK in one slot)", _np(collided["t"]), yc, color="m", marker="^", important=True
            )
    else:
        pk = lk[lk["kind"].isin(["packet_delivered", "packet_lost", "packet_dropped"])]
        y = np.array([seq_of.get(int(i), np.nan) for i in pk["ip_id"].fillna(-1).astype(int)])
        ok = pk["kind"].to_numpy() == "packet_delivered"
        t = _np(pk["t"])
        out["link_data"] = Series("link: packets delivered", t[ok], y[ok], color="C2")
        out["link_retx"] = Series("link: packets lost or dropped", t[~ok], y[~ok], color="C3", marker="x", important=True)
    resets = link[link["kind"] == "link_reset"]
    out["link_reset"] = Series("link resets", _np(resets["t"]), np.zeros(len(resets)), style="vlines", color="k", important=True)
    return out


def route_layer(run: Run, conn: int) -> dict[str, Series]:
    """The routing under the flow (a network routed by DSR, Holland & Vaidya's view):
    route errors reaching the flow's sending node and its route discoveries as lines on
    the time axis, the flow's packets dropped for want of a route at the sequence number
    they carry."""
    import numpy as np

    node = run.flow_node(conn)
    if node is None:
        return {}
    out: dict[str, Series] = {}
    routes = run.routes
    if routes is not None:
        at_node = routes[routes["node"] == node]
        errors = at_node[at_node["event"] == "error_received"]
        learned = at_node[at_node["event"] == "route_learned"]
        out["route_error"] = Series(
            f"route errors reaching {node}", _np(errors["t"]), np.zeros(len(errors)), style="vlines", color="C1",
            important=True,
        )
        out["route_learned"] = Series(
            f"routes {node} discovered", _np(learned["t"]), np.zeros(len(learned)), marker="|", color="C9",
            important=True,
        )
    link = run.link
    flow = run.flow_of(conn)
    if link is not None and "reason" in link and "flow" in link:
        drops = link[(link["kind"] == "packet_dropped") & link["reason"].isin(["no_route", "send_buffer_timeout"])]
        drops = drops[drops["flow"] == flow]
        p = run.conn_in(run.sender_name, conn)
        sent = p[p["dir"] == run.data_dir(conn)]
        seq_of = dict(zip(sent["ip_id"].astype("int64"), _np(sent["seq_rel"])))
        y = np.array([seq_of.get(int(i), np.nan) for i in drops["ip_id"].fillna(-1).astype(int)])
        out["no_route"] = Series(
            "packets dropped: no route", _np(drops["t"]), y, color="C3", marker="x", important=True
        )
    return out


def link_queue(run: Run, direction: str = "down") -> Series:
    """Packets waiting in the link's queue (forward direction) after each link event."""
    link = run.link
    if link is None:
        import numpy as np

        return Series("link queue", np.array([]), np.array([]), style="step", color="C8")
    q = link[(link["dir"] == direction) & link["queue_packets"].notna()]
    return Series("link queue (packets)", _np(q["t"]), _np(q["queue_packets"]), style="step", color="C8")


def multilayer(run: Run, conn: int) -> dict[str, Series]:
    """Ludwig et al.'s MultiTracer set: TCP sender, TCP receiver and link, offset so they do not overlap.
    A lone capture taken at the receiver (the analysis' `capture_point`) is the receiver's layer,
    `TcpRcv`, not the sender's."""
    out = tcp_layer(run, run.sender_name, conn, "TcpRcv" if run.at_receiver(conn) else "TcpSnd")
    if run.receiver_name:
        out.update(tcp_layer(run, run.receiver_name, conn, "TcpRcv"))
    out.update(link_layer(run, conn))
    out.update(route_layer(run, conn))
    return out


def multilayer_offset(layers: dict[str, Series]) -> float:
    """The vertical distance between the groups: about 4 % of the sequence range, a round number."""
    import math

    import numpy as np

    top = max((float(np.nanmax(s.y)) - float(np.nanmin(s.y)) for s in layers.values() if len(s) and s.style != "vlines" and np.isfinite(s.y).any()), default=1.0)
    raw = max(top * 0.04, 1000.0)
    mag = 10 ** math.floor(math.log10(raw))
    return float(min((m * mag for m in (1, 2, 5, 10) if m * mag >= raw), default=raw))


def tsg(run: Run, conn: int, name: str | None = None) -> dict[str, Series]:
    """tcptrace's time/sequence graph at one capture: segments, ACK and window lines, SACKs, retransmissions."""
    name = name or run.sender_name
    p = run.conn_in(name, conn)
    d = run.data_dir(conn)
    data = p[(p["dir"] == d) & (p["seglen"].fillna(0) > 0)]
    acks = p[(p["dir"] != d) & (p["tcp_flags"].fillna(0).astype(int) & 0x10 > 0)]
    retx = data[data["retransmission"]]
    fresh = data[~data["retransmission"]]
    seq = _np(fresh["seq_rel"])
    out = {
        "segments": Series("data segments", _np(fresh["t"]), seq, style="bars", y2=seq + _np(fresh["seglen"]), color="k"),
        "ack": Series("ACK line", _np(acks["t"]), _np(acks["ack_rel"]), style="step", color="C2"),
        "window": Series("receive window", _np(acks["t"]), _np(acks["ack_rel"]) + _np(acks["window"]), style="step", color="C1"),
    }
    kinds = retx["retrans_kind"].astype(object).fillna("other").to_numpy()
    colors = {"timeout": "C3", "fast_retransmit": "C4", "sack": "C6", "tail_loss_probe": "C8", "other": "C5"}
    labels = {
        "timeout": "retransmission (timeout)",
        "fast_retransmit": "fast retransmit",
        "sack": "SACK recovery",
        "tail_loss_probe": "tail loss probe",
        "other": "retransmission",
    }
    for kind in colors:
        sel = retx[kinds == kind]
        if len(sel):
            out[f"retx_{kind}"] = Series(labels[kind], _np(sel["t"]), _np(sel["seq_rel"]), color=colors[kind], marker="o", important=True)
    # Timeouts: the retransmission that each timer expiry sent (backoff set).
    to = retx[(kinds == "timeout") & retx["backoff"].notna()]
    out["timeouts"] = Series(
        "RTO expiry", _np(to["t"]), _np(to["seq_rel"]), style="vlines", color="C3", important=True,
        y2=_np(to["backoff"]),
    )
    sack = _sack_series(run, name, conn, acks)
    if sack is not None:
        out["sack"] = sack
    return out


def _sack_series(run: Run, name: str, conn: int, acks: pd.DataFrame) -> Series | None:
    """SACK blocks as vertical bars at the ACK's time (edges read from the capture itself)."""
    import numpy as np

    if "sack_blocks" not in acks or not (acks["sack_blocks"].fillna(0) > 0).any():
        return None
    from airtrace import pcapio

    wanted = set(int(f) for f in acks.loc[acks["sack_blocks"].fillna(0) > 0, "frame"])
    p = run.conn_in(name, conn)
    d = run.data_dir(conn)
    data = p[p["dir"] == d]
    isn = int(data["seq"].iloc[0]) - int(data["seq_rel"].iloc[0]) if len(data) else 0
    times = dict(zip(acks["frame"].astype(int), _np(acks["t"])))
    xs, lo, hi = [], [], []
    for i, rec in enumerate(pcapio.read_records(run.captures[name]), start=1):
        if i not in wanted:
            continue
        info = pcapio.decode_tcp(rec)
        if info is None:
            continue
        for left, right in info.sack:
            xs.append(times[i])
            lo.append((left - isn) % 2**32)
            hi.append((right - isn) % 2**32)
    if not xs:
        return None
    return Series("SACK blocks", np.array(xs), np.array(lo, float), style="bars", y2=np.array(hi, float), color="C9")


#: Why a capture taken at the receiver has no RTO and no cwnd curve.
NOT_AT_SENDER = "captured at the receiver: the sender's RTO and cwnd are not seen there"


def rtt_title(run: Run, conn: int) -> str:
    """The heading of the RTT view: it has no RTO at the receiver (`rtt`)."""
    return "RTT (no RTO: captured at the receiver)" if run.at_receiver(conn) else "RTT and RTO"


def rtt(run: Run, conn: int) -> dict[str, Series]:
    """RTT samples (Karn) at the sender, and SRTT/RTO from the state log or estimated as RFC 6298 would.
    At the receiver (`Run.at_receiver`) a data segment's ACK leaves the capture's own host: the
    samples are the receiver's ACK delay, apart from those of its own data, which cross the path;
    no RTO is estimated from them (it would be a sender's timer computed from the wrong times)."""
    import numpy as np

    p = run.conn_in(run.sender_name, conn)
    s = p[p["ack_rtt"].notna()]
    t, r = _np(s["t"]), _np(s["ack_rtt"])
    if run.at_receiver(conn):
        # An ACK in the data's direction times the receiver's own data (a request) over the path.
        path = _np(s["dir"]) == run.data_dir(conn)
        return {
            "rtt": Series("RTT of the receiver's own data (the path)", t[path], r[path], color="C0"),
            "ack_delay": Series("ACK delay at the receiver (data in, its ACK out: not the path's RTT)", t[~path], r[~path], color="C7"),
        }
    out = {"rtt": Series("RTT samples (Karn's rule)", t, r, color="C0")}
    st = _state(run, conn)
    if st is not None:
        srtt = st[st["srtt_ns"] > 0]
        out["srtt"] = Series("SRTT (sender state)", _np(srtt["t"]), _np(srtt["srtt_ns"]) / 1e9, style="step", color="C2")
        out["rto"] = Series("RTO, backoff included (sender state)", _np(st["t"]), _np(st["rto_ns"]) / 1e9, style="step", color="C3")
    elif len(r):
        srtt, var, rtos = r[0], r[0] / 2, []
        sr = []
        for x in r:
            var = 0.75 * var + 0.25 * abs(srtt - x)
            srtt = 0.875 * srtt + 0.125 * x
            sr.append(srtt)
            rtos.append(max(srtt + 4 * var, 0.2))
        out["srtt"] = Series("SRTT (estimated, RFC 6298)", t, np.array(sr), style="step", color="C2")
        out["rto"] = Series("RTO (estimated, RFC 6298, 200 ms floor)", t, np.array(rtos), style="step", color="C3")
    return out


def _state(run: Run, conn: int) -> pd.DataFrame | None:
    st = run.tcpstate
    flow = run.flow_of(conn)
    if st is None or flow is None:
        return None
    st = st[st["flow"] == flow]
    return st if len(st) else None


def cwnd(run: Run, conn: int) -> dict[str, Series]:
    """cwnd and ssthresh from the state log, or cwnd inferred from bytes in flight (labelled so);
    nothing at the receiver (`NOT_AT_SENDER`): the bytes in flight measured there are not the
    sender's window, and would hold it flat through every stall of the sender's timer."""
    import numpy as np

    if run.at_receiver(conn):
        return {}
    st = _state(run, conn)
    if st is not None:
        ss = _np(st["ssthresh"])
        ss = np.where(ss >= 2**30, np.nan, ss)
        return {
            "cwnd": Series("cwnd (sender state)", _np(st["t"]), _np(st["cwnd"]), style="step", color="C0"),
            "ssthresh": Series("ssthresh (sender state)", _np(st["t"]), ss, style="step", color="C1"),
            "in_flight": Series("bytes in flight (sender state)", _np(st["t"]), _np(st["in_flight"]), style="step", color="C7"),
        }
    p = run.conn_in(run.sender_name, conn)
    d = run.data_dir(conn)
    data = p[(p["dir"] == d) & p["bytes_in_flight"].notna()]
    return {
        "cwnd": Series("cwnd, inferred from bytes in flight", _np(data["t"]), _np(data["bytes_in_flight"]), style="step", color="C0", note="inferred"),
    }


def bin_width(t: np.ndarray, span: float, bins: int) -> tuple[float, float]:
    """A bin width for about `bins` bins over `span` seconds that does not alias against
    the data's packet spacing (t: the sending times): a whole number of the median gap
    between consecutive packets, so that a steady flow puts the same count in every bin
    (a width of 4.2 spacings would put 4, then 5: a 25 % ripple the flow does not have).
    Returns (width, spacing); spacing is 0 when the data has no steady one."""
    import numpy as np

    target = max(span / max(bins, 1), 1e-3)
    gaps = np.diff(np.sort(t))
    gaps = gaps[gaps > 0]
    if len(gaps) < 2:
        return target, 0.0
    spacing = float(np.median(gaps))
    if spacing <= 0 or spacing > target:
        return target, 0.0
    return round(target / spacing) * spacing, spacing


def throughput(run: Run, conn: int, bins: int = 200, time: tuple[float, float] | None = None) -> dict[str, Series]:
    """Sent (all bytes) and goodput (newly ACKed bytes) per time bin, bit/s, over the
    connection or the `time` window; the bin (`bin_width`) is said in the labels, its
    width in each series' `note` (seconds)."""
    import numpy as np

    p = run.conn_in(run.sender_name, conn)
    d = run.data_dir(conn)
    data = p[(p["dir"] == d) & (p["seglen"].fillna(0) > 0)]
    acks = p[(p["dir"] != d) & (p["tcp_flags"].fillna(0).astype(int) & 0x10 > 0)]
    if len(p) == 0:
        return {}
    t0, t1 = time if time is not None else (float(p["t"].min()), float(p["t"].max()))
    sent_t = _np(data["t"])
    width, spacing = bin_width(sent_t[(sent_t >= t0) & (sent_t <= t1)], t1 - t0, bins)
    # Edges half a spacing before the first packet: packets at a steady spacing never sit on one.
    start = t0 - spacing / 2
    edges = start + width * np.arange(int(np.ceil((t1 - start) / width)) + 1)
    mid = edges[:-1] + width / 2
    sent, _ = np.histogram(sent_t, edges, weights=_np(data["seglen"]))
    ack_rel = np.maximum.accumulate(np.nan_to_num(_np(acks["ack_rel"])))
    acked = np.diff(np.concatenate([[0.0], ack_rel]))
    good, _ = np.histogram(_np(acks["t"]), edges, weights=acked)
    how = f"{width:.3g} s bins" + (f" = {round(width / spacing)} × the {spacing:.3g} s median packet spacing" if spacing else "")
    return {
        "sent": Series(f"sent, retransmissions included ({how})", mid, sent * 8 / width, style="step", color="C0", note=str(width)),
        "goodput": Series("goodput (newly ACKed bytes)", mid, good * 8 / width, style="step", color="C2", note=str(width)),
    }


@dataclass
class Utilization:
    """Ludwig et al.'s utilization measure for one connection."""

    conn: int
    label: str
    duration_s: float
    idle_s: float  # link idle while the sender had data
    idle_source: str
    idle_spans: list[tuple[float, float]]
    data_bytes: int
    resent_bytes: int  # bytes sent more than once

    @property
    def idle_fraction(self) -> float:
        return self.idle_s / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def resent_fraction(self) -> float:
        return self.resent_bytes / self.data_bytes if self.data_bytes else 0.0

    @property
    def utilization(self) -> float:
        return (1 - self.idle_fraction) * (1 - self.resent_fraction)


def _outstanding(run: Run, conn: int) -> tuple[np.ndarray, np.ndarray]:
    """Intervals (starts, ends) during which the sender had data sent and not yet acknowledged."""
    import numpy as np

    st = _state(run, conn)
    if st is not None:
        t, busy = _np(st["t"]), _np(st["in_flight"]) > 0
    else:
        p = run.conn_in(run.sender_name, conn)
        d = run.data_dir(conn)
        p = p[(p["seglen"].fillna(0) > 0) & (p["dir"] == d) | (p["dir"] != d)]
        top = np.maximum.accumulate(np.where(p["dir"] == d, _np(p["seq_rel"]) + _np(p["seglen"]), 0.0))
        acked = np.maximum.accumulate(np.where(p["dir"] != d, np.nan_to_num(_np(p["ack_rel"])), 0.0))
        t, busy = _np(p["t"]), top > acked
    edges = np.diff(np.concatenate([[0], busy.astype(int), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    tt = np.concatenate([t, [t[-1] if len(t) else 0.0]])
    return tt[starts], tt[np.minimum(ends, len(t) - 1)]


def _link_idle(run: Run, flow: int | None) -> list[tuple[float, float]] | None:
    """Spans the forward link transmitted nothing, from the link log: ARQ frame slots, or packet
    transmissions (ending at their arrival time, less the propagation delay, which cancels)."""
    import numpy as np

    link = run.link
    if link is None:
        return None
    lk = link[link["dir"] == "down"]
    frames = lk[lk["kind"].isin(["frame_sent", "frame_retransmitted"])]
    rlp = run.meta.get("link")
    rlp = rlp if isinstance(rlp, dict) else {}
    if len(frames) > 1 and rlp.get("arq") == "gsm_rlp":
        return _rlp_idle(_np(frames["t"]), rlp)
    if len(frames) > 1:
        t = np.sort(_np(frames["t"]))
        slot = float(np.median(np.diff(t)))
        starts, ends = t[:-1] + slot, t[1:]
        keep = ends - starts > slot * 0.5
        return list(zip(starts[keep], ends[keep]))
    pk = lk[lk["kind"].isin(["packet_delivered", "packet_lost"])]
    if len(pk) < 2:
        return None
    t = _np(pk["t"])
    size = np.maximum(pk["bytes"].fillna(0).to_numpy(dtype=float), 1.0)
    gaps = np.diff(t)
    per_byte = float(np.percentile(gaps / size[1:], 5)) if len(gaps) else 0.0
    tx = size[1:] * per_byte
    idle_start, idle_end = t[:-1], t[1:] - tx
    keep = idle_end - idle_start > max(per_byte * 40, 1e-4)
    return list(zip(idle_start[keep], idle_end[keep]))


def _rlp_idle(frame_t: np.ndarray, rlp: dict[str, Any]) -> list[tuple[float, float]]:
    """GSM RLP's idle slots: those flow control left open (RLP's own rule, crates/airtrace-link
    rlp.rs `flow_open`) in which no frame went, between the first frame and the last. A slot
    that flow control keeps closed (one in five at 960 B/s) is not idle: TCP could not
    have used it (Ludwig et al. §4.3 count only what the TCP sender leaves unused)."""
    import numpy as np

    frame_ns = int(rlp["frame_ns"])
    used = np.unique(np.rint(frame_t * 1e9 / frame_ns).astype(np.int64))
    k = np.arange(used[0], used[-1] + 1, dtype=np.int64)
    full = int(rlp["frame_payload_bytes"]) * 1_000_000_000
    per_slot = int(rlp["rate_bytes_per_s"]["down"]) * frame_ns
    open_slot = np.ones(len(k), bool) if per_slot >= full else (k + 1) * per_slot // full > k * per_slot // full
    idle = k[open_slot & ~np.isin(k, used)]
    if len(idle) == 0:
        return []
    # Runs of idle slots: two open slots are never further apart than this, so a closed
    # slot between two idle ones belongs to the same run.
    widest = 1 if per_slot >= full else -(-full // per_slot)
    breaks = np.flatnonzero(np.diff(idle) > widest)
    first = np.concatenate([[0], breaks + 1])
    last = np.concatenate([breaks, [len(idle) - 1]])
    f = frame_ns / 1e9
    return [(float(idle[a] * f), float((idle[b] + 1) * f)) for a, b in zip(first, last)]


def _intersect(a: list[tuple[float, float]], starts: np.ndarray, ends: np.ndarray) -> list[tuple[float, float]]:
    import numpy as np

    out = []
    for s, e in a:
        i = int(np.searchsorted(ends, s))
        while i < len(starts) and starts[i] < e:
            lo, hi = max(s, starts[i]), min(e, ends[i])
            if hi > lo:
                out.append((float(lo), float(hi)))
            i += 1
    return out


def utilization(run: Run, conn: int) -> Utilization:
    """Idle time while data waited and bytes sent twice. Idle spans come from the link log when the
    run has one (the link transmitted nothing while the sender had unacknowledged data), otherwise
    from the ACKs at the capture: gaps in the ACK stream from the receiver (all connections), the
    last one ending at the connection's last packet, longer than four times the usual spacing
    while this connection's data was unacknowledged (labelled as estimated). Over the connection's
    duration, as the diagnosis' shares are: a timeout's silence is idle time here too."""
    import numpy as np

    row = run.connections.loc[conn]
    side = "a_to_b" if run.data_dir(conn) == 0 else "b_to_a"
    starts, ends = _outstanding(run, conn)
    link_idle = _link_idle(run, run.flow_of(conn)) if len(run.connections) == 1 else None
    if link_idle is not None:
        spans, source = _intersect(link_idle, starts, ends), "from the link log"
    else:
        # No link log: the bottleneck delivered nothing while no ACK came back. Gaps in the ACK
        # stream from this connection's receiver (every connection together, so that a shared
        # link busy with another one does not count) longer than four times the usual spacing.
        p = run.conn_in(run.sender_name, conn)
        d = run.data_dir(conn)
        mine = p[p["dir"] != d]
        allp = run.packets(run.sender_name)
        if len(mine):
            src, dst = mine["ip_src"].iloc[0], mine["ip_dst"].iloc[0]
            allp = allp[(allp["ip_src"] == src) & (allp["ip_dst"] == dst)]
        t = np.sort(_np(allp["t"])) if len(mine) else np.array([])
        gaps = np.diff(t)
        usual = float(np.median(gaps)) if len(gaps) else 0.0
        # The connection's last packet closes the last gap: a sender that waits out its
        # timer until it gives up has no ACK after the silence to end it (zeek_206_example_b:
        # 81 s without an ACK read as 0.5 s idle, beside 65 s of timeouts in the diagnosis).
        t = np.append(t, max(float(p["t"].max()), float(t[-1]))) if len(t) else t
        gaps = np.diff(t)
        sel = np.flatnonzero(gaps > max(4 * usual, 1e-3))
        spans = _intersect([(float(t[i] + usual), float(t[i + 1])) for i in sel], starts, ends)
        where = "receiver" if run.at_receiver(conn) else "sender"
        source = f"estimated from gaps in the ACKs at the {where}"
    return Utilization(
        conn=conn,
        label=f"{row['a']} → {row['b']}",
        duration_s=float(row["duration_s"]),
        idle_s=float(sum(b - a for a, b in spans)),
        idle_source=source,
        idle_spans=spans,
        data_bytes=int(row[f"{side}.data_bytes"]),
        resent_bytes=int(row[f"{side}.retransmitted_bytes"]),
    )
