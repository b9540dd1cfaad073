"""Outputs that are whole or absent: files written to a temporary name and renamed into
place, and sets of files published together by renaming their directory.

A reader, or the next run after a crash, a full disk or a signal, sees the old output or
the new one, never half of one; the temporary names carry the process id and a random
tag, so concurrent writers do not meet, and they are removed when the write fails. An
error names the file it was writing.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable, Collection
from pathlib import Path
from typing import BinaryIO


def _tag() -> str:
    return f"{os.getpid()}-{secrets.token_hex(4)}"


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
    try:
        stage.mkdir()
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
    shutil.rmtree(old, ignore_errors=True)
    _sync_dir(out.parent)


def _sync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
