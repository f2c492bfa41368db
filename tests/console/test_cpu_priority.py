"""console/cpu_priority.py on this host's scheduler: a lowered thread and the threads it starts run below the
process's base priority, the pages' threads stay at it, and what at_base_priority runs is made at the base."""

from __future__ import annotations

import os
import threading

import pytest

from console import cpu_priority


def _nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def _in_thread(work):
    """work()'s value, run on a fresh thread (a lowered thread can never be raised again: never the test's own)."""
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    assert not thread.is_alive()
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.fixture
def base() -> int:
    return _nice()


def test_a_lowered_thread_and_the_threads_it_starts_run_below_the_rest(settings, base):
    settings.BACKGROUND_NICE = 7

    def lowered() -> tuple[int, int]:
        cpu_priority.lower_this_thread()
        cpu_priority.lower_this_thread()  # a second call lowers no further
        return _nice(), _in_thread(_nice)

    assert _in_thread(lowered) == (min(19, base + 7), min(19, base + 7))
    assert _nice() == base and _in_thread(_nice) == base


def test_at_base_priority_makes_what_outlives_the_work_at_the_base(settings, base):
    settings.BACKGROUND_NICE = 5

    def lowered() -> tuple[int, int, int]:
        cpu_priority.lower_this_thread()
        made_by = cpu_priority.at_base_priority(threading.get_native_id)
        started = cpu_priority.at_base_priority(lambda: _in_thread(_nice))  # a thread made there starts there
        return _nice(), made_by, started

    nice, made_by, started = _in_thread(lowered)
    assert nice == min(19, base + 5)
    assert made_by != threading.get_native_id() and started == base


def test_at_base_priority_runs_in_place_on_a_thread_that_is_not_lowered(base):
    assert cpu_priority.at_base_priority(threading.get_native_id) == threading.get_native_id()


def test_an_error_of_the_work_reaches_its_caller(settings):
    settings.BACKGROUND_NICE = 3

    def lowered() -> None:
        cpu_priority.lower_this_thread()
        cpu_priority.at_base_priority(lambda: 1 / 0)

    with pytest.raises(ZeroDivisionError):
        _in_thread(lowered)


def test_zero_leaves_background_threads_at_the_base(settings, base):
    settings.BACKGROUND_NICE = 0

    def unchanged() -> int:
        cpu_priority.lower_this_thread()
        return _nice()

    assert _in_thread(unchanged) == base


@pytest.mark.filterwarnings("ignore:This process")
def test_a_forked_child_starts_again_from_its_own_priority(settings):
    settings.BACKGROUND_NICE = 4
    _in_thread(cpu_priority.lower_this_thread)  # this process has a base and launcher threads now
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child has no launcher threads: it must not hand work to them and wait forever
        ok = cpu_priority._base is None and cpu_priority.at_base_priority(lambda: 42) == 42
        os.write(writer, b"1" if ok else b"0")
        os._exit(0)
    os.close(writer)
    try:
        assert os.read(reader, 1) == b"1"
    finally:
        os.close(reader)
        os.waitpid(pid, 0)
