"""Runs one command and starts it again whenever it dies, so honcho (which stops every process when one exits)
keeps the rest of `make run` going. SIGTERM or SIGINT stops the command and then this wrapper.

    python -m console.devstack.keep_running NAME -- COMMAND [ARGS...]
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

BACKOFF_S = (1, 2, 5, 10, 30)
HEALTHY_AFTER_S = 60  # a run this long resets the backoff
STOP_GRACE_S = 20


def describe(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def keep_running(name: str, command: list[str]) -> int:
    stopping = False
    child: subprocess.Popen | None = None

    def stop(signum, _frame) -> None:
        nonlocal stopping
        stopping = True
        if child is not None and child.poll() is None:
            _signal_group(child.pid, signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    failures = 0
    while not stopping:
        started = time.monotonic()
        # Its own process group: when it dies, whatever it started (runserver's serving child, a JVM) is stopped
        # with it, so the next start does not find the port taken by an orphan.
        child = subprocess.Popen(command, start_new_session=True)
        while child.poll() is None:
            try:
                child.wait(0.5)
            except subprocess.TimeoutExpired:
                continue
        _signal_group(child.pid, signal.SIGKILL)
        if stopping:
            break
        lived = time.monotonic() - started
        failures = 0 if lived > HEALTHY_AFTER_S else failures + 1
        delay = BACKOFF_S[min(failures, len(BACKOFF_S)) - 1] if failures else BACKOFF_S[0]
        print(f"[keep_running] {name} stopped ({describe(child.returncode)}) after {lived:.0f} s; "
              f"starting it again in {delay} s", file=sys.stderr, flush=True)
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline and not stopping:
            time.sleep(0.2)
    if child is not None and child.poll() is None:
        try:
            child.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 3 or args[1] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    return keep_running(args[0], args[2:])


if __name__ == "__main__":
    sys.exit(main())
