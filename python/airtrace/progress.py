"""One progress bar for a job of several phases (`airtrace analyze --parquet`, issue 17
item 7): it counts one quantity from the start of the job to its end (bytes of the
captures, for each pass over them), so that it never restarts and never goes back,
and its label says which phase the job is in and on which file.

It is drawn on the stream it is given (the command line gives stderr when stderr is
a terminal and --no-progress is not set; else no stream, and nothing is drawn), only
once the job has taken more than DELAY seconds and at most every EVERY seconds, as
the native commands' bars are (airtrace-report's `Progress`). `suspended()` takes it
off the line while something else is printed.

    >>> import io
    >>> bar = Bar(200, io.StringIO())
    >>> bar.phase("analysing a.pcap (1/2)"); bar.to(100); bar.to(50)   # doctest: +SKIP
    >>> bar.done                                                        # doctest: +SKIP
    100
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

#: Seconds before the bar first shows (a quick job shows none).
DELAY = 0.7
#: Seconds between two draws.
EVERY = 0.1


class Bar:
    """A bar of `total` units drawn on `stream` (None: never drawn)."""

    def __init__(self, total: int, stream: TextIO | None) -> None:
        self.total, self.stream = max(total, 0), stream
        self.done, self.label = 0, ""
        self.started = time.monotonic()
        self.drawn_at: float | None = None
        self.width = 0

    def phase(self, label: str) -> None:
        """The job is now doing `label` (drawn at once when it is new)."""
        if label != self.label:
            self.label = label
            self._draw(force=True)

    def to(self, done: int) -> None:
        """`done` units of the total are done; a smaller number than before leaves the bar where it is."""
        self.done = min(max(self.done, done), self.total)
        self._draw()

    @contextmanager
    def suspended(self) -> Iterator[None]:
        """The line cleared while the body prints; drawn again at the next change."""
        self._clear()
        yield

    def close(self) -> None:
        """The bar taken off the line for good."""
        self._clear()
        self.stream = None

    def line(self, columns: int) -> str:
        """The bar as drawn in `columns` columns: label, bar, percentage, MB done and
        total, the label cut to fit."""
        share = self.done / self.total if self.total else 1.0
        tail = f" {share:4.0%} {self.done / 1e6:.1f}/{self.total / 1e6:.1f} MB"
        cells = max(10, min(30, columns // 4))
        bar = "[" + "#" * round(share * cells) + "." * (cells - round(share * cells)) + "]"
        room = max(0, columns - len(bar) - len(tail) - 1)
        label = self.label if len(self.label) <= room else self.label[: max(0, room - 1)] + "…"
        return f"{label:<{room}} {bar}{tail}"  # the bar stays in place as labels change

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.stream is None or now - self.started < DELAY:
            return
        if not force and self.drawn_at is not None and now - self.drawn_at < EVERY:
            return
        self.drawn_at = now
        text = self.line(shutil.get_terminal_size((100, 24)).columns - 1)
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()
        self.width = len(text)

    def _clear(self) -> None:
        if self.stream is not None and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0
            self.drawn_at = None
