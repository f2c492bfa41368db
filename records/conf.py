"""Settings of the message pages' exports and imports. settings.py is full, so they are read here: a value in
settings wins, then the environment, then the default."""

from __future__ import annotations

import os

from django.conf import settings


def _int(name: str, default: int) -> int:
    value = getattr(settings, name, None)
    if value is None:
        value = os.environ.get(name, "")
    try:
        return int(value) if str(value).strip() else default
    except ValueError:
        return default


def export_max_records() -> int:
    """The most records one export streams; past it the range is a job for a Spark replay to files."""
    return _int("EXPORT_MAX_RECORDS", 1_000_000)


def export_spark_above() -> int:
    """Offsets in a range above which the export links also offer a Spark replay to files."""
    return _int("EXPORT_SPARK_ABOVE", 200_000)


def import_max_rate() -> int:
    """The highest rate (records per second) an import may ask for."""
    return _int("IMPORT_MAX_RATE", 50_000)


def import_max_bytes() -> int:
    """The largest file the import page accepts."""
    return _int("IMPORT_MAX_BYTES", 200 * 1024 * 1024)


def import_dir() -> str:
    """Where an upload waits for the worker that imports it: a folder the web and worker processes share."""
    value = getattr(settings, "IMPORT_DIR", None) or os.environ.get("IMPORT_DIR", "")
    return value or str(settings.BASE_DIR / ".data" / "imports")


def import_silence_s() -> int:
    """How long a running import may go without a heartbeat before it is failed as abandoned (its worker died)."""
    return _int("IMPORT_HEARTBEAT_TIMEOUT_S", 60)


def import_queue_wait_s() -> int:
    """How long an import may wait for a worker to take it before it is failed (no worker is running)."""
    return _int("IMPORT_QUEUE_TIMEOUT_S", 900)
