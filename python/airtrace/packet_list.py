"""`airtrace analyze --packets [--conn N] [--filter EXPR]`: the packets table printed a
line per frame, as tshark lists packets, with the analysis' verdicts; or, with
`--json`, as a JSON list of rows (every column of the packets table).

The filter is a display filter over the table's columns (airtrace.packet_filter).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from airtrace import _core

if TYPE_CHECKING:
    import pandas as pd

def print_packets(
    files: list[str], *, conns: list[int] | None, expression: str | None, as_json: bool, progress: bool
) -> int:
    """Prints the packets of each file that `conns` and `expression` keep. Returns the
    exit status: 2 for a filter that cannot be read, 1 when some file could not be
    read, else 0."""
    from airtrace.packet_filter import FilterError, mask
    from airtrace.trace import AnalysisError, read

    failed = False
    listed = []
    for path in files:
        try:
            packets = read(path, progress=progress).packets()
        except AnalysisError as e:
            print(f"airtrace: error: {e}", file=sys.stderr)
            failed = True
            continue
        if conns is not None:
            packets = packets[packets["conn"].isin(conns).fillna(False).astype(bool)]
        if expression is not None:
            try:
                packets = packets[mask(packets, expression)]
            except FilterError as e:
                print(f"airtrace: error: {e}", file=sys.stderr)
                return 2
        if as_json:
            listed.append(f'{{"path": {json.dumps(path)}, "packets": {packets.to_json(orient="records", date_format="iso", date_unit="ns")}}}')
        else:
            sys.stdout.write(listing(path, packets))
    if as_json:
        sys.stdout.write(f'{{"airtrace_version": "{_core.__version__}", "files": [{", ".join(listed)}]}}\n')
    return 1 if failed else 0


def listing(path: str, packets: pd.DataFrame) -> str:
    """`path`'s packets as text: a header line, then one line per frame with its
    endpoints and the flags set on it (Wireshark's and airtrace's)."""
    import pandas as pd

    head = f"{path}: {len(packets)} packets\n"
    if packets.empty:
        return head
    flags = [name for name in _core.flag_names() if name in packets.columns]
    shown = pd.DataFrame({
        "frame": packets["frame"],
        "time_rel": packets["time_rel"].map("{:.6f}".format),
        "conn": packets["conn"],
        "dir": packets["dir"].map({0: "a_to_b", 1: "b_to_a"}),
        "src": _endpoint(packets["ip_src"], packets["src_port"]),
        "dst": _endpoint(packets["ip_dst"], packets["dst_port"]),
        "seq_rel": packets["seq_rel"],
        "ack_rel": packets["ack_rel"],
        "seglen": packets["seglen"],
        "retrans_kind": packets["retrans_kind"],
        "flags": _flag_names(packets, flags),
    })
    text: str = shown.astype(object).where(shown.notna(), "-").to_string(index=False)
    return head + text + "\n"


def _endpoint(address: pd.Series, port: pd.Series) -> pd.Series:
    """`address:port` (`[v6]:port`), or the address alone without a port."""
    addr = address.astype(object)
    v6 = addr.astype(str).str.contains(":")
    shown = addr.where(~v6, "[" + addr.astype(str) + "]")
    with_port = shown.astype(str) + ":" + port.astype(str)
    return with_port.where(port.notna(), addr)


def _flag_names(packets: pd.DataFrame, flags: list[str]) -> pd.Series:
    """Per frame, the names of the flag columns set on it, joined by commas."""
    import pandas as pd

    names = pd.Series("", index=packets.index)
    for flag in flags:
        names = names.where(~packets[flag], names + "," + flag)
    return names.str.lstrip(",")
