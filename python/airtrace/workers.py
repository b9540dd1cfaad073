"""Where work runs: this process, a pool of worker processes on every core, or a Dask
cluster (a scheduler's address, or a LocalCluster started here). `airtrace sweep`
(airtrace.sweeps) and `airtrace analyze --parquet` (airtrace.export) share it.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from distributed import Client

T = TypeVar("T")
R = TypeVar("R")


class WorkersError(ValueError):
    """Workers that cannot be had (Dask missing, an unknown cluster kind)."""


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def end_with(parent: int) -> None:
    """Makes this worker process end when its parent is gone, even killed with SIGKILL:
    else it would wait for work forever. A pool's initializer."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="airtrace-orphan-watch", daemon=True).start()


def process_pool(jobs: int) -> Any:
    """A ProcessPoolExecutor of `jobs` fresh workers (spawn, not fork) that end with this
    process."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(jobs, mp_context=context, initializer=end_with, initargs=(os.getpid(),))


@contextmanager
def dask_client(scheduler: str | None, jobs: int) -> Iterator[Client]:
    """A client of the scheduler at `scheduler`, or of a LocalCluster of `jobs` workers."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise WorkersError("a Dask cluster needs Dask: pip install 'airtrace[dask]'") from None
    if scheduler is not None:
        with Client(scheduler) as client:
            yield client
        return
    with (
        LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        yield client


def check_cluster(cluster: str | None) -> None:
    if cluster not in (None, "local"):
        raise WorkersError(f"unknown cluster {cluster!r}: `local` (or give a scheduler's address)")


def in_process(items: int, *, jobs: int | None, scheduler: str | None, cluster: str | None) -> bool:
    """Whether `ordered_map` computes `items` items in this process: when it is given
    one job, or one item, and no Dask cluster."""
    return scheduler is None and cluster is None and ((jobs or cores()) == 1 or items <= 1)


@contextmanager
def ordered_map(
    fn: Callable[[T], R],
    items: Iterable[T],
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    cluster: str | None = None,
    ahead: int = 2,
) -> Iterator[Iterator[R]]:
    """`fn` of each item, in the items' order, computed in this process (`jobs` 1), on
    `jobs` worker processes (default: one per core), or on a Dask cluster. At most
    `ahead` results per worker wait to be taken, so that big results (a capture's
    packets table) do not pile up in memory."""
    check_cluster(cluster)
    items = list(items)
    here = in_process(len(items), jobs=jobs, scheduler=scheduler, cluster=cluster)
    jobs = jobs or cores()
    if here:
        yield (fn(item) for item in items)
    elif scheduler is not None or cluster is not None:
        with dask_client(scheduler, jobs) as client:
            workers = max(1, len(client.scheduler_info()["workers"]))
            yield _windowed(lambda item: client.submit(fn, item, pure=False), items, workers * ahead,
                            cancel=lambda f: client.cancel(f))
    else:
        pool = process_pool(jobs)
        try:
            yield _windowed(lambda item: pool.submit(fn, item), items, jobs * ahead, cancel=lambda f: f.cancel())
        finally:
            pool.shutdown(wait=False, cancel_futures=True)


def _windowed(submit: Callable[[Any], Any], items: list[Any], window: int, *, cancel: Callable[[Any], Any]) -> Iterator[Any]:
    """The results of futures made by `submit`, in order, with at most `window` submitted
    and not yet taken."""
    pending: deque[Any] = deque()
    queue = iter(items)
    try:
        for item in queue:
            pending.append(submit(item))
            if len(pending) >= window:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            cancel(future)
