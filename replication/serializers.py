"""The JSON of `manage.py replication brokers --format json`, which the API answers too."""

from __future__ import annotations

from dataclasses import asdict

from replication.selectors import BrokersOverview


def brokers_json(overview: BrokersOverview) -> dict:
    return {"brokers": [asdict(b) for b in overview.brokers], "offline_partitions": overview.offline_partitions,
            "under_replicated_partitions": overview.under_replicated_partitions}
