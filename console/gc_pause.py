"""Pausing Python's cycle collector around bulk work that allocates millions of short-lived containers.

A 50,000-group lag sweep decodes and builds a few million small lists and dicts while it holds hundreds of
thousands of long-lived ones (every partition's offsets). Each allocation burst triggers collections that walk all
of them: measured, most of the time json.loads spent on the stored windows went to the collector, not decoding.
None of that data forms reference cycles, so reference counting frees it anyway; the collector runs again as
soon as the work ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """Disables the cycle collector for the block (process-wide; nested uses are fine) and restores its state."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
