"""The console's files are its own: its database (sessions, password hashes, SSO tokens), the dev stack's Kafka
segments, Redis and registry data, replay outputs and logs are readable by the user running it only.

Every process the console starts runs with umask 077 (console/__init__.py sets it on import, so `manage.py`, gunicorn,
Celery and the dev stack's servers all get it, and the JVMs and Spark drivers they start inherit it). A data folder
made before that, with wider modes, is tightened at start (`tighten`, run by `make run` and `make test` through
devstack/private_data.py), and /health says when a folder the console writes is open to others.

It imports nothing from Django, so the dev stack's scripts can use it before settings exist.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

PRIVATE_UMASK = 0o077
OTHERS = 0o077  # group and other bits
MSG_TIGHTENED = ("Tightened {path} to owner-only access: it was {mode:04o}, and {count} files and folders in it could "
                 "be read by other users of this host (the session table, password hashes, Kafka's data).")


def restrict_umask() -> int:
    """umask 077 for this process and what it starts; returns the umask it had."""
    return os.umask(PRIVATE_UMASK)


@dataclass(frozen=True)
class OpenPath:
    path: str
    mode: int  # the full permission bits, for the message

    def as_json(self) -> dict:
        return {"path": self.path, "mode": f"{self.mode:04o}"}


def open_paths(paths: list[str | os.PathLike]) -> list[OpenPath]:
    """Those of `paths` that exist and give their group or others any access (links are not followed)."""
    found = []
    for path in paths:
        try:
            info = os.lstat(path)
        except OSError:
            continue
        mode = stat.S_IMODE(info.st_mode)
        if mode & OTHERS and not stat.S_ISLNK(info.st_mode):
            found.append(OpenPath(str(path), mode))
    return found


def _narrow(path: str, mode: int) -> bool:
    """Only called for what lstat said is not a link: only this user can add one in a folder of theirs."""
    if not mode & OTHERS:
        return False
    os.chmod(path, mode & ~OTHERS)
    return True


def tighten(root: str | os.PathLike) -> str:
    """Takes group and other access away from `root` and everything under it (links are neither followed nor
    changed); the line saying what was done, or "" when nothing was open."""
    root = Path(root)
    try:
        info = os.lstat(root)
    except FileNotFoundError:
        return ""
    if not stat.S_ISDIR(info.st_mode):
        return ""
    root_mode = stat.S_IMODE(info.st_mode)
    changed = 0
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            path = os.path.join(folder, name)
            try:
                entry = os.lstat(path)
            except FileNotFoundError:  # a server running beside this removed it
                continue
            if not stat.S_ISLNK(entry.st_mode) and _narrow(path, stat.S_IMODE(entry.st_mode)):
                changed += 1
    opened_root = _narrow(str(root), root_mode)
    if not (opened_root or changed):
        return ""
    return MSG_TIGHTENED.format(path=root, mode=root_mode, count=changed)
