"""Work no page waits on yields the CPU to work a page waits on.

On a small host the brokers, the web workers and the background work (lag sweeps, the shared tables' rebuilds and
their decoding ahead) share a few cores. A sweep's burst of decoding and storing made the pages that arrived
meanwhile wait for the CPU. Threads doing background work lower their own scheduling priority (Linux keeps a nice
value per thread, and a thread starts at its creator's), so the scheduler serves page threads first and the
background work takes what is left; with idle cores it runs as fast as before.

A lowered thread must not start anything that serves pages later: a process or thread starts at its starter's nice
value, and an unprivileged process cannot raise a value back. A cluster's client process, the link that reads its
answers and the Java Admin's JVM are therefore made through at_base_priority(), which hands the making to threads
started before anything of the process was lowered.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

from django.conf import settings

log = logging.getLogger(__name__)
T = TypeVar("T")
LAUNCHER_THREADS = 4  # making a client process waits on it to listen; clusters being started do not queue long
MAX_NICE = 19

_lock = threading.Lock()
_base: int | None = None  # this process's priority before anything of it was lowered (None: nothing lowered)
_launcher: _Launcher | None = None
_refused = False  # logged once: the host did not let a thread lower itself


def _nice_of_this_thread() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


class _Launcher:
    """Threads at the process's base priority that run what at_base_priority hands them. All are started here,
    from a thread not yet lowered: a pool that starts threads on demand would start them at its caller's."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        for number in range(LAUNCHER_THREADS):
            threading.Thread(target=self._serve, name=f"base-priority-{number}", daemon=True).start()

    def _serve(self) -> None:
        while True:
            work, future = self._queue.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(work())
            except BaseException as exc:  # the caller gets it, as if it had run the work itself
                future.set_exception(exc)

    def run(self, work: Callable[[], T]) -> T:
        future: Future = Future()
        self._queue.put((work, future))
        return future.result()


def lower_this_thread() -> None:
    """Runs the calling thread, and the threads it starts from now on, settings.BACKGROUND_NICE steps below the
    process's base priority (0 leaves it). Best effort: a host that refuses leaves the thread as it was."""
    global _base, _launcher, _refused
    step = settings.BACKGROUND_NICE
    if step <= 0:
        return
    current = _nice_of_this_thread()
    with _lock:
        if _base is None:
            _base = current
            _launcher = _Launcher()  # from this thread, still at the base priority
        target = min(MAX_NICE, _base + step)
    if current >= target:
        return
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), target)
    except OSError as exc:
        if not _refused:
            _refused = True
            log.warning("Background work runs at the pages' priority: lowering a thread's was refused (%s)", exc)


def at_base_priority(work: Callable[[], T]) -> T:
    """work(), run at the process's base priority: here when this thread is not lowered, else on a thread that is
    not. For whatever outlives the caller's work and may serve pages (a process, a thread it starts)."""
    with _lock:
        base, launcher = _base, _launcher
    if base is None or launcher is None or _nice_of_this_thread() <= base:
        return work()
    return launcher.run(work)


def _forget_after_fork() -> None:
    """A forked child has none of its parent's threads: it starts from its own priority again."""
    global _base, _launcher, _lock
    _lock = threading.Lock()
    _base = _launcher = None


os.register_at_fork(after_in_child=_forget_after_fork)
