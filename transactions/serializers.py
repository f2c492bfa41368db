"""The JSON of `manage.py transactions --format json` (the tool's columns with snake_case keys), which the API
answers too."""

from __future__ import annotations

from dataclasses import asdict


def transactions_json(found) -> list[dict]:
    return [asdict(t) for t in found]


def transaction_json(info, *, now_ms: int) -> list[dict]:
    duration = None if info.start_time_ms is None else now_ms - info.start_time_ms
    return [{**asdict(info), "duration_ms": duration,
             "partitions": [{"topic": r.topic, "partition": r.partition} for r in info.partitions]}]


def producers_json(found) -> list[dict]:
    return [{"topic": ref.topic, "partition": ref.partition, **asdict(p)}
            for ref, states in sorted(found.items()) for p in states]


def hanging_json(found, *, at_ms: int) -> list[dict]:
    return [{"topic": h.ref.topic, "partition": h.ref.partition, **asdict(h.producer),
             "duration_ms": h.duration_ms(at_ms)} for h in found]
