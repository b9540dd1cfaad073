"""airtrace: find out why TCP is slow over a wireless link.

    >>> import airtrace
    >>> trace = airtrace.read("capture.pcapng")        # doctest: +SKIP
    >>> trace.connections                               # doctest: +SKIP
    >>> trace.packets()[lambda p: p.retransmission]     # doctest: +SKIP

This module stays light: pandas and pyarrow are imported only when a table is built,
so that the command line starts fast.
"""

from airtrace._core import __version__
from airtrace.trace import AnalysisError, Trace, read

__all__ = ["AnalysisError", "Trace", "read", "__version__"]
