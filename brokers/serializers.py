"""JSON of what the brokers app reads, the same for `manage.py brokers ... --format json` and the API."""

from __future__ import annotations

from brokers.log_dirs import BrokerLogDirs


def log_dirs_json(state: BrokerLogDirs) -> dict:
    """`brokers log-dirs --format json`: the broker's cordoned.log.dirs and each directory's state."""
    return {"broker": state.broker, "cordoned_log_dirs": state.config, "source": state.source,
            "changeable": state.changeable,
            "log_dirs": [{"path": d.path, "cordoned": d.cordoned, "replicas": d.replicas, "size": d.size,
                          "total_bytes": d.total_bytes, "usable_bytes": d.usable_bytes, "error": d.error or None}
                         for d in state.dirs]}
