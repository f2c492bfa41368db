"""Runs one command and starts it again whenever it dies, so honcho (which stops every process when one exits)
keeps the rest of `make run` going; but a command that keeps dying is given up on and reported, not restarted
forever (a broker that cannot open its partitions' files fails the same way on every start).

    python -m devstack.keep_running NAME [--healthy-after S] [--give-up-after N] [--within S] -- COMMAND...

The command's output passes through, and its state and last lines go to a status file (devstack/
process_status.py) that /health and the clusters page read. A run that lasts --healthy-after seconds is a good
start: it clears the failures. --give-up-after deaths within --within seconds with no good start between them
and the command is not started again; this wrapper stays (honcho would stop the whole stack if it exited) until
SIGUSR1 asks for another try (`python -m console.process_status retry NAME`) or SIGTERM/SIGINT, which
stop the command and then this wrapper.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from console.process_status import (FAILED, RETRYING, RUNNING, STARTING, STOPPED, TAIL_LINES,
                                             ProcessStatus, clip, pick_error, status_path, status_write)

BACKOFF_S = (1, 2, 5, 10, 30)
HEALTHY_AFTER_S = 60.0
GIVE_UP_AFTER = 5
GIVE_UP_WINDOW_S = 300.0
STOP_GRACE_S = 20
READ_CHUNK = 65536  # a line longer than this is passed on in pieces, never held whole


@dataclass(frozen=True)
class Policy:
    backoff_s: tuple[float, ...] = BACKOFF_S
    healthy_after_s: float = HEALTHY_AFTER_S
    give_up_after: int = GIVE_UP_AFTER
    give_up_window_s: float = GIVE_UP_WINDOW_S

    def delay(self, failures: int) -> float:
        return self.backoff_s[min(max(failures, 1), len(self.backoff_s)) - 1]


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


def _say(text: str) -> None:
    print(f"[keep_running] {text}", file=sys.stderr, flush=True)


def _forward(pipe: IO[bytes], tail: deque) -> None:
    """Passes the command's output on unchanged and keeps its last lines. Output keeps being read after our own
    stdout is gone, so the command never blocks on a full pipe."""
    out = sys.stdout.buffer
    for raw in iter(lambda: pipe.readline(READ_CHUNK), b""):
        try:
            out.write(raw)
            out.flush()
        except (OSError, ValueError):
            pass
        tail.append(clip(raw.decode(errors="replace")))
    pipe.close()


class Supervisor:
    def __init__(self, name: str, command: list[str], policy: Policy, directory: Path | None = None) -> None:
        self.name, self.command, self.policy, self.directory = name, command, policy, directory
        self.status = ProcessStatus(name=name, state=STARTING, supervisor_pid=os.getpid())
        self.child: subprocess.Popen | None = None
        self.stopping = False
        self.stop_asked_at = 0.0
        self.retry_asked = False
        self.deaths: deque[float] = deque()
        self._write_failed = False

    def _save(self, status: ProcessStatus) -> None:
        self.status = status
        try:
            status_write(status, self.directory)
        except OSError as exc:  # a full or read-only disk must not stop the supervision itself
            if not self._write_failed:
                _say(f"cannot write {self.name}'s status file: {exc}")
            self._write_failed = True

    def _on_stop(self, signum, _frame) -> None:
        self.stopping = True
        self.stop_asked_at = time.monotonic()
        if self.child is not None and self.child.poll() is None:
            _signal_group(self.child.pid, signum)

    def _on_retry(self, _signum, _frame) -> None:
        self.retry_asked = True

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)
        signal.signal(signal.SIGUSR1, self._on_retry)
        while not self.stopping:
            self.retry_asked = False
            lived, tail, returncode = self._run_once()
            if self.stopping:
                break
            self._record_death(lived, tail, returncode)
            if self.status.state == FAILED:
                _say(f"{self.name} stopped ({self.status.last_exit}) after {lived:.0f} s: {len(self.deaths)} failures "
                     f"within {self.policy.give_up_window_s:.0f} s, so it is not started again. Last error: "
                     f"{self.status.last_error or '(no output)'}. Status in {status_path(self.name, self.directory)}; "
                     f"`python -m console.process_status retry {self.name}` tries again.")
                self._wait(None)
                self.deaths.clear()
            else:
                delay = self.policy.delay(self.status.failures)
                _say(f"{self.name} stopped ({self.status.last_exit}) after {lived:.0f} s; "
                     f"starting it again in {delay:g} s")
                self._wait(delay)
        self._save(self.status.moved_to(STOPPED, pid=None))
        return 0

    def _run_once(self) -> tuple[float, list[str], int]:
        started = time.monotonic()
        # Its own process group: when it dies, whatever it started (runserver's serving child, a JVM) is stopped
        # with it, so the next start does not find the port taken by an orphan.
        child = self.child = subprocess.Popen(self.command, start_new_session=True, stdout=subprocess.PIPE,
                                              stderr=subprocess.STDOUT)
        self._save(self.status.moved_to(STARTING, pid=child.pid))
        tail: deque[str] = deque(maxlen=TAIL_LINES)
        reader = threading.Thread(target=_forward, args=(child.stdout, tail), daemon=True)
        reader.start()
        while child.poll() is None:
            try:
                child.wait(0.5)
            except subprocess.TimeoutExpired:
                pass
            if self.stopping and time.monotonic() - self.stop_asked_at > STOP_GRACE_S:
                _signal_group(child.pid, signal.SIGKILL)
            elif self.status.state == STARTING and time.monotonic() - started >= self.policy.healthy_after_s:
                self.deaths.clear()
                self._save(self.status.moved_to(RUNNING, failures=0, last_exit="", last_error="", output_tail=[]))
        _signal_group(child.pid, signal.SIGKILL)
        reader.join(2)  # EOF comes once the group is gone; a child that left the group may hold the pipe open
        return time.monotonic() - started, list(tail), child.returncode

    def _record_death(self, lived: float, tail: list[str], returncode: int) -> None:
        now = time.monotonic()
        self.deaths.append(now)
        while self.deaths and now - self.deaths[0] > self.policy.give_up_window_s:
            self.deaths.popleft()
        exit_text = describe(returncode)
        state = FAILED if len(self.deaths) >= self.policy.give_up_after else RETRYING
        self._save(self.status.moved_to(state, pid=None, failures=self.status.failures + 1, last_exit=exit_text,
                                        last_error=pick_error(tail) or f"{exit_text}, with no output",
                                        output_tail=tail))

    def _wait(self, seconds: float | None) -> None:
        """Sleeps for the backoff (or, given up, indefinitely) unless asked to stop or to try again."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while not self.stopping and not self.retry_asked and (deadline is None or time.monotonic() < deadline):
            time.sleep(0.2)
        if self.retry_asked and not self.stopping:
            _say(f"{self.name}: starting it again, as asked")


def keep_running(name: str, command: list[str], policy: Policy | None = None, directory: Path | None = None) -> int:
    return Supervisor(name, command, policy or Policy(), directory).run()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--" not in args or args.index("--") == len(args) - 1:
        print(__doc__, file=sys.stderr)
        return 2
    split = args.index("--")
    parser = argparse.ArgumentParser(prog="keep_running", usage=__doc__)
    parser.add_argument("name")
    parser.add_argument("--healthy-after", type=float, default=HEALTHY_AFTER_S)
    parser.add_argument("--give-up-after", type=int, default=GIVE_UP_AFTER)
    parser.add_argument("--within", type=float, default=GIVE_UP_WINDOW_S)
    options = parser.parse_args(args[:split])
    policy = Policy(healthy_after_s=options.healthy_after, give_up_after=max(1, options.give_up_after),
                    give_up_window_s=options.within)
    return keep_running(options.name, args[split + 1:], policy)


if __name__ == "__main__":
    sys.exit(main())
