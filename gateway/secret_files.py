"""Files that hold secrets (a replay's spec with S3 keys or a JAAS line, the resident driver's token, a Kafka tool's
client properties): readable by this user only from the moment they exist.

A file written and then chmodded is readable by others in between (and keeps the wider mode if the chmod never
runs), so these are created with mode 0600 by mkstemp (O_CREAT | O_EXCL, 0600; a umask can only narrow it) under a
random name and, for a named file, moved into place with os.replace: a reader sees the old file or the whole new
one, never a half-written one.

It imports nothing from Django: the resident Spark driver ships it (sparkjobs/runner.py, gateway_zip).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def write_secret_file(path: str | os.PathLike, content: str | bytes) -> Path:
    """Writes `content` to `path` (mode 0600, atomically replacing any file there); returns the path."""
    target = Path(path)
    descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(content.encode() if isinstance(content, str) else content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return target


@contextlib.contextmanager
def temporary_secret_file(content: str | bytes, *, suffix: str = "") -> Iterator[Path]:
    """A new file (mode 0600) in the temporary folder holding `content`, removed when the block ends."""
    descriptor, name = tempfile.mkstemp(suffix=suffix, prefix="console-secret-")
    path = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(content.encode() if isinstance(content, str) else content)
        yield path
    finally:
        path.unlink(missing_ok=True)
