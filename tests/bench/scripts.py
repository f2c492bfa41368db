"""The bench scripts, found by listing bench/: every module there but the helpers the scripts import."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
# Imported by the scripts, with no command line of their own (tests/bench/test_scripts.py holds them to that).
HELPERS = frozenset({"__init__", "common", "scale_stack", "broker_profile", "broker_requests"})


def bench_scripts() -> list[Path]:
    return sorted(path for path in BENCH.glob("*.py") if path.stem not in HELPERS)
