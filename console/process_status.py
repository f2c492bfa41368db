"""What keep_running knows about each process it supervises, in a small JSON file per process, for /health and
the clusters page to read (they run in other processes, often started later).

A file is replaced whole (gateway/secret_files.py: mode 0600, renamed into place), so a reader never sees half of
one; 0600 because a process's last lines of output may name hosts or carry a secret it printed. A file whose
supervisor is gone (stopped with SIGKILL, or the machine rebooted) reads as "stopped": its old failure is history,
not the state of anything running.

It imports nothing from Django: keep_running runs outside it.

    python -m console.process_status running     # the supervised processes still alive; exit 1 if any
    python -m console.process_status retry NAME  # a process given up on: start it again (SIGUSR1)
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from console.paths import DATA_DIR
from gateway.secret_files import write_secret_file

STATUS_DIR_ENV = "PROCESS_STATUS_DIR"
DEFAULT_STATUS_DIR = DATA_DIR / "processes"
TAIL_LINES = 12
LINE_MAX = 400

STARTING = "starting"  # started, not yet alive long enough to count as a good start
RUNNING = "running"
RETRYING = "retrying"  # died; waiting to be started again
FAILED = "failed"  # died too often in a row: no longer started, until a retry (SIGHUP) or a new `make run`
STOPPED = "stopped"
FAILING_STATES = (RETRYING, FAILED)

# Stack frames and the "... 12 more" of a Java trace say where, not what.
_FRAME = re.compile(r"^\s+(at |\.\.\. \d+ more)")
_ERROR = re.compile(r"(Error|Exception|ERROR|FATAL|Fatal|fatal|Traceback|Too many open files|[Ff]ailed|No such file"
                    r"|[Pp]ermission denied|[Aa]ddress already in use|refused|[Cc]annot|[Cc]an't)")


def status_dir() -> Path:
    return Path(os.environ.get(STATUS_DIR_ENV) or DEFAULT_STATUS_DIR)


@dataclass(frozen=True)
class ProcessStatus:
    name: str
    state: str
    supervisor_pid: int
    pid: int | None = None
    since: str = ""  # when it entered this state (UTC, ISO 8601)
    failures: int = 0  # deaths since its last good start
    last_exit: str = ""  # "exit code 1", "signal SIGABRT"
    last_error: str = ""  # the line of its last output that says what went wrong
    output_tail: list[str] = field(default_factory=list)

    @property
    def failing(self) -> bool:
        """Died and not started well since; a process started again after failures still counts until it has
        lived long enough, because a broker that dies while loading its logs looks started for a while."""
        return self.state in FAILING_STATES or (self.state == STARTING and self.failures > 0)

    def moved_to(self, state: str, **changes) -> ProcessStatus:
        return replace(self, state=state, since=_now(), **changes)

    def as_json(self) -> dict:
        return asdict(self)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def status_path(name: str, directory: Path | None = None) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or name.startswith("."):
        raise ValueError(f"not a process name: {name!r}")
    return (directory or status_dir()) / f"{name}.json"


def status_write(status: ProcessStatus, directory: Path | None = None) -> None:
    path = status_path(status.name, directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_secret_file(path, json.dumps(status.as_json(), indent=1))


def status_read(name: str, directory: Path | None = None) -> ProcessStatus | None:
    """The process's status, or None when keep_running never ran it here; a dead supervisor's reads as stopped."""
    path = status_path(name, directory)
    try:
        data = json.loads(path.read_text())
        status = ProcessStatus(**data)
    except (OSError, ValueError, TypeError):  # absent, or cut short by a full disk: nothing to report
        return None
    if status.state != STOPPED and not supervisor_alive(status.supervisor_pid):
        return replace(status, state=STOPPED, pid=None)
    return status


def statuses_read(directory: Path | None = None) -> dict[str, ProcessStatus]:
    directory = directory or status_dir()
    try:
        names = sorted(p.stem for p in directory.glob("*.json") if not p.name.startswith("."))
    except OSError:
        return {}
    found = {name: status_read(name, directory) for name in names}
    return {name: status for name, status in found.items() if status is not None}


def supervisor_alive(pid: int) -> bool:
    """Alive and still keep_running: a pid reused by another program after a reboot does not count."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return b"keep_running" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc: the signal check is all there is


def clip(line: str) -> str:
    line = line.rstrip()
    return line if len(line) <= LINE_MAX else line[:LINE_MAX - 1] + "…"


def pick_error(lines: list[str]) -> str:
    """The line of a dead process's last output that says what went wrong: the last one that reads like an
    error and is not a stack frame (for a Java trace, the exception and its message, e.g. "...: Too many open
    files"; for Python, the exception line after the traceback), else the last line that says anything."""
    meaningful = [clip(line) for line in lines if line.strip() and not _FRAME.match(line)]
    for line in reversed(meaningful):
        if _ERROR.search(line):
            return line.strip()
    return meaningful[-1].strip() if meaningful else ""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["running"]:
        alive = [s for s in statuses_read().values() if s.state != STOPPED]
        for status in alive:
            print(f"{status.name}: {status.state} (keep_running pid {status.supervisor_pid})")
        return 1 if alive else 0
    if len(args) == 2 and args[0] == "retry":
        status = status_read(args[1])
        if status is None or status.state == STOPPED:
            print(f"{args[1]} is not supervised by a running keep_running here.", file=sys.stderr)
            return 1
        os.kill(status.supervisor_pid, signal.SIGUSR1)
        print(f"{status.name} ({status.state}): asked keep_running (pid {status.supervisor_pid}) to start it again.")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
