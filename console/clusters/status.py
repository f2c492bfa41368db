"""Per-cluster status lines that other apps contribute to the clusters page (lag sampling, rebalance history),
so the cluster registry shows them without importing the apps that own them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class StatusLine:
    label: str
    text: str
    ok: bool


StatusProvider = Callable[[str], StatusLine]
_providers: list[StatusProvider] = []


def register_status_provider(provider: StatusProvider) -> None:
    if provider not in _providers:
        _providers.append(provider)


def cluster_status_lines(cluster: str) -> list[StatusLine]:
    return [provider(cluster) for provider in _providers]
