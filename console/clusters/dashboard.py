"""The cluster dashboard's panels. Each app that owns some of a cluster's state (topics, groups, connectors,
alerts) registers a panel at start-up, so the cluster page shows counts from all of them without the platform
importing the apps. A panel reads stored or shared state (the topic table, the lag statuses, connector
snapshots), never a fresh scan of the cluster; one that fails says so in its own card and the others still show."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Figure:
    label: str
    value: int | str | None  # None: not known yet
    url: str = ""
    tone: str = ""  # "bad" or "warn" when the figure needs attention (a count above zero)


@dataclass(frozen=True)
class Panel:
    title: str
    figures: list[Figure] = field(default_factory=list)
    note: str = ""  # as of when, or why some figures are missing
    order: int = 50


PanelProvider = Callable[[str], Panel | None]
_providers: list[PanelProvider] = []


def register_dashboard_panel(provider: PanelProvider) -> None:
    if provider not in _providers:
        _providers.append(provider)


def attention(count: int | None, tone: str = "bad") -> str:
    return tone if count else ""


def dashboard_panels(cluster: str) -> list[Panel]:
    panels = []
    for provider in _providers:
        try:
            panel = provider(cluster)
        except Exception as exc:  # noqa: BLE001 - one panel's failure must not take the page down
            log.warning("dashboard panel %s failed for %s", getattr(provider, "__name__", provider), cluster,
                        exc_info=True)
            name = getattr(provider, "panel_title", "A panel")
            panel = Panel(name, note=f"Not available: {getattr(exc, 'message', '') or type(exc).__name__}.")
        if panel is not None:
            panels.append(panel)
    return sorted(panels, key=lambda p: p.order)
