"""Where a request's time went, in its Server-Timing header: Kafka calls, database queries, shared tables.

A page that is slow now and then on a busy cluster is slow for one of a few reasons: the brokers answered late,
the database did, or the process had to fetch and decode a new shared table. Browsers show this header in their
developer tools and bench/scale.py reads it, so the slow loads say which one it was without a profiler.

A call a request hands to a thread of its own (`in_request`) counts for it too, so phases that overlap the request
thread's own work may add up to more than `app`. Background threads (a table rebuild, the /metrics renderer) do not
run in a request's context: their time shows only as the request waiting, in `app`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack

from django.db import connections
from django.http import HttpRequest, HttpResponse

from gateway.timing import _spent, in_request, timed  # noqa: F401 - one accumulator; callers import these here

# Phases in the order the header lists them, with what each counts; `app` is the whole request as the middleware
# saw it.
_UNITS = {"kafka": ("call", "calls"), "db": ("query", "queries"), "table": ("read", "reads"),
          "decode": ("decoding", "decodings")}
PHASES = tuple(_UNITS)

# The phases' accumulator lives with the gateway (gateway/timing.py), the lowest layer that adds to it; the
# request's opening and reading of it stay here.
def _query_timer(execute, sql, params, many, context):
    with timed("db"):
        return execute(sql, params, many, context)


def _runqueue_wait_s() -> float | None:
    """How long this thread has waited, runnable, for a CPU (Linux's schedstat); None where it is not kept."""
    try:
        with open("/proc/thread-self/schedstat") as stat:
            return int(stat.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def header(spent: dict[str, list[float]], total_s: float, cpu_s: float | None = None,
           runqueue_s: float | None = None) -> str:
    """The Server-Timing value (pure): each phase with its milliseconds and how many times it ran, the whole
    request (`app`), the CPU time its thread had (`cpu`) and how long it waited, runnable, for a CPU (`runqueue`).
    What `app` holds beyond those and the calls is waiting on something else: another thread of the process
    holding the interpreter, or a lock."""
    parts = []
    for phase in PHASES:
        if phase in spent:
            seconds, count = spent[phase]
            unit = _UNITS[phase][count != 1]
            parts.append(f'{phase};dur={seconds * 1000:.1f};desc="{int(count)} {unit}"')
    parts.append(f"app;dur={total_s * 1000:.1f}")
    if cpu_s is not None:
        parts.append(f"cpu;dur={cpu_s * 1000:.1f}")
    if runqueue_s is not None:
        parts.append(f"runqueue;dur={runqueue_s * 1000:.1f}")
    return ", ".join(parts)


def parse(value: str) -> dict[str, float]:
    """Milliseconds per phase from a Server-Timing value (for benchmarks and tests)."""
    found: dict[str, float] = {}
    for part in value.split(","):
        name, _, params = part.strip().partition(";")
        for param in params.split(";"):
            key, _, number = param.partition("=")
            if key.strip() == "dur":
                found[name] = float(number)
    return found


class ServerTimingMiddleware:
    """First in MIDDLEWARE, so that the session and user queries count too. Only signed-in users get the header:
    how long a page spent in Kafka or the database is nothing an anonymous caller (the login page, /health) needs."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        spent: dict[str, list[float]] = {}
        token = _spent.set(spent)
        started, cpu_started, waited_before = time.perf_counter(), time.thread_time(), _runqueue_wait_s()
        try:
            with ExitStack() as stack:
                for alias in connections:
                    stack.enter_context(connections[alias].execute_wrapper(_query_timer))
                response = self.get_response(request)
        finally:
            _spent.reset(token)
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return response
        waited_after = _runqueue_wait_s()
        waited = None if waited_before is None or waited_after is None else waited_after - waited_before
        response["Server-Timing"] = header(spent, time.perf_counter() - started, time.thread_time() - cpu_started,
                                           waited)
        return response
