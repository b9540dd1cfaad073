"""Outputs that are whole or absent: files written to a temporary name and renamed into
place, and sets of files published together by renaming their directory.

A reader, or the next run after a crash, a full disk or a signal, sees the old output or
the new one, never half of one; the temporary names carry the process id and a random
tag, so concurrent writers do not meet, and they are removed when the write fails. An
error names the file it was writing.

A staging directory is named as the simulator names its partial bundles,
`.OUT.partial-PID-N` (N decimal; crates/airtrace-sim/src/dest.rs), and held under a
shared flock while it is filled: what a process killed with SIGKILL leaves behind,
`airtrace simulate --cleanup DIR` recognises and removes.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
from collections.abc import Callable, Collection
from pathlib import Path
from typing import BinaryIO


def _tag() -> str:
    """PID-N, N a random decimal number: the shape dest.rs's sweep recognises."""
    return f"{os.getpid()}-{secrets.randbelow(10**12)}"


def write_atomically(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Makes the file `path` by `write`, to a temporary name in its directory, synced
    and renamed into place, the directory synced after: there is the whole file or
    none, even after a crash. An OSError names `path`."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(21, "is a directory; give a file name", str(path))
    tmp = path.parent / f".{path.name}.{_tag()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        tmp.unlink(missing_ok=True)
        if isinstance(e, OSError) and e.filename is None:
            raise OSError(e.errno, e.strerror, str(path)) from None
        raise
    _sync_dir(path.parent)


def write_bytes_atomically(path: Path, data: bytes) -> None:
    """`write_atomically` of `data`."""
    write_atomically(path, lambda f: f.write(data))


def publish_together(out: Path, names: Collection[str], write: Callable[[Path], object]) -> None:
    """Makes the directory `out` holding the files `names`, all new or none: `write`
    fills a staging directory beside it, which then takes `out`'s place (the old `out`,
    if any, is set aside and removed after). An existing `out` must hold nothing but
    those files: anything else there is refused, not deleted."""
    out = Path(out)
    if out.exists():
        if not out.is_dir():
            raise NotADirectoryError(20, "not a directory", str(out))
        others = sorted(set(os.listdir(out)) - set(names))
        if others:
            raise OSError(
                17, f"holds other files ({', '.join(others[:3])}); give a directory of its own", str(out)
            )
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = out.parent / f".{out.name}.partial-{_tag()}"
    old = out.parent / f".{out.name}.old-{_tag()}"
    held = None
    try:
        stage.mkdir()
        held = _hold(stage)
        write(stage)
        if out.exists():
            os.rename(out, old)
        try:
            os.rename(stage, out)
        except BaseException:
            if old.exists():
                os.rename(old, out)
            raise
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    finally:
        if held is not None:
            os.close(held)
    shutil.rmtree(old, ignore_errors=True)
    _sync_dir(out.parent)


def _hold(directory: Path) -> int:
    """A shared flock on `directory`, so that a cleanup from another PID namespace (where
    this PID means nothing) sees it in use; the descriptor to close when done."""
    import fcntl

    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    except OSError as e:
        if e.errno not in (errno.ENOLCK, errno.EOPNOTSUPP):  # else no locks here: the PID alone tells
            os.close(fd)
            raise
    return fd


def _sync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
