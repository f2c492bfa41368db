"""JVM options for a run of one of Kafka's command-line tools (TopicCommand, ConsumerGroupCommand, StorageTool...),
which lasts a few seconds and is mostly the JVM starting: the client compiler alone, the serial collector, and a
class-data archive of the tool classpath.

Loading and verifying Kafka's classes from the jars is most of such a run's CPU. A dynamic class-data archive
(JDK 13+) holds them already parsed and verified; with it and the client compiler a run of `kafka-topics
--describe` took 0.96 s of CPU against 2.90 s with the JVM's defaults (bench/tool_jvm.py). The tests start tools by
the hundred.

The first run of a classpath without an archive writes it when that JVM exits (one process at a time, under a
file lock; the others meanwhile run without one). A JVM ignores, silently, an archive made for another classpath
or another JVM, so a stale file only costs the speed-up; its name carries a digest of both, so a new Kafka or JDK
gets an archive of its own.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from glob import glob
from pathlib import Path

from devstack.launcher import SMALL_JVM

# The archive-writing run's warnings (classes it cannot archive), and a mapping run's when the archive does not
# load (another JDK build, a damaged file: the run only starts slower), would go to the tool's standard output.
_QUIET_ARCHIVING = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")


def archive_path(main_class: str, classpath: str, folder: Path) -> Path:
    """Where the archive of `main_class` on `classpath` for the `java` on PATH lives in `folder`: one per tool, as
    each tool loads classes of its own besides the clients' and the logging's."""
    java = shutil.which("java") or "java"
    real = os.path.realpath(java)
    try:
        stamp = str(os.stat(real).st_mtime_ns)
    except OSError:
        stamp = ""
    jars = [name for part in classpath.split(os.pathsep) for name in (sorted(glob(part)) if "*" in part else [part])]
    digest = hashlib.sha256("\n".join([main_class, real, stamp, *jars]).encode()).hexdigest()[:16]
    return folder / f"tool-classes-{digest}.jsa"


def mapped_options(main_class: str, classpath: str, folder: Path) -> tuple[str, ...]:
    """The options for a run that is not waited for (a consumer left running): the archive when there is one,
    never written by such a run."""
    return _mapping(archive_path(main_class, classpath, folder))


def _mapping(archive: Path) -> tuple[str, ...]:
    return (*SMALL_JVM, *_QUIET_ARCHIVING, f"-XX:SharedArchiveFile={archive}") if archive.exists() else SMALL_JVM


@contextmanager
def tool_jvm_options(main_class: str, classpath: str, folder: Path) -> Iterator[tuple[str, ...]]:
    """The options for one run of `main_class` on `classpath`, inside which the run happens: the run that writes
    the archive puts it in place when it has ended."""
    archive = archive_path(main_class, classpath, folder)
    if archive.exists():
        yield _mapping(archive)
        return
    try:
        lock = open(folder / f"{archive.name}.lock", "a")
    except OSError:  # a folder this process cannot write: no archive, the rest still helps
        yield SMALL_JVM
        return
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another run is writing it
            yield SMALL_JVM
            return
        partial = archive.with_name(f"{archive.name}.{os.getpid()}.partial")
        try:
            yield (*SMALL_JVM, *_QUIET_ARCHIVING, f"-XX:ArchiveClassesAtExit={partial}")
            if partial.exists() and not archive.exists():
                os.replace(partial, archive)
        finally:
            partial.unlink(missing_ok=True)
