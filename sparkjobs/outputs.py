"""A replay's output files, wherever its file sink wrote them: a folder on this machine or an s3a:// prefix."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from sparkjobs import s3
from sparkjobs.models import ReplayJob


@dataclass(frozen=True)
class OutputFile:
    name: str
    size: int


def output_files(job: ReplayJob) -> list[OutputFile]:
    """The job's part files (Spark's markers such as _SUCCESS left out); raises ConsoleError if the object store
    does not answer."""
    if not job.output_dir:
        return []
    if s3.is_s3a(job.output_dir):
        location = s3.parse_s3a(job.output_dir)
        objects = s3.S3Client().list(location)
        return sorted((OutputFile(o.name, o.size) for o in objects
                       if o.name.startswith("part-") and o.key == f"{location.prefix}/{o.name}"),
                      key=lambda f: f.name)
    folder = Path(job.output_dir)
    if not folder.is_dir():
        return []
    return [OutputFile(p.name, p.stat().st_size) for p in sorted(folder.glob("part-*")) if p.is_file()]


def output_open(job: ReplayJob, name: str) -> Iterator[bytes] | None:
    """The bytes of one of the job's files, streamed; None if the job has no such file."""
    if name not in {f.name for f in output_files(job)}:
        return None
    if s3.is_s3a(job.output_dir):
        location = s3.parse_s3a(job.output_dir)
        return s3.S3Client().stream(location.bucket, location.child(name).prefix)
    path = (Path(job.output_dir) / name).resolve()
    if Path(settings.REPLAY_OUTPUT_DIR).resolve() not in path.parents:
        return None
    return _chunks(path)


def _chunks(path: Path, size: int = 256 * 1024) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while chunk := handle.read(size):
            yield chunk
