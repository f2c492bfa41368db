"""Data that other apps keep per cluster, registered by those apps so that removing a cluster can say what goes
with it (before it happens) and then delete it, without the registry importing them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ClusterData:
    label: str  # "rebalance history rows", said to the person before removal
    count: Callable[[str], int]
    delete: Callable[[str], int]


_kinds: list[ClusterData] = []


def register_cluster_data(kind: ClusterData) -> None:
    if all(existing.label != kind.label for existing in _kinds):
        _kinds.append(kind)


def cluster_data_counts(cluster: str) -> dict[str, int]:
    return {kind.label: kind.count(cluster) for kind in _kinds}


def cluster_data_delete(cluster: str) -> dict[str, int]:
    return {kind.label: kind.delete(cluster) for kind in _kinds}
