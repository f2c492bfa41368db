"""The consumer groups panel of the cluster dashboard: from the shared group table (states, types) and the lag
statuses the last sweep stored; the same figures the groups list filters on."""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlencode

from django.urls import reverse

from console.clusters.dashboard import Figure, Panel, attention
from offsets.selectors import group_table_snapshot

REBALANCING = ("PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling")


def groups_panel(cluster: str) -> Panel:
    url = reverse("offsets:groups", args=[cluster])
    snapshot = group_table_snapshot(cluster)
    if snapshot is None:
        return Panel("Consumer groups", [Figure("Groups", None, url)], note="The group table is being built.",
                     order=30)
    states = Counter(entry.state for entry in snapshot.rows)
    statuses = Counter(entry.status for entry in snapshot.rows)

    def listed(**query) -> str:
        return url + "?" + urlencode(query)

    rebalancing = sum(states[s] for s in REBALANCING)
    figures = [
        Figure("Groups", len(snapshot.rows), url),
        Figure("Stable", states["Stable"], listed(state="Stable")),
        Figure("Empty", states["Empty"], listed(state="Empty")),
        Figure("Rebalancing", rebalancing, listed(sort="status"), attention(rebalancing, "warn")),
        Figure("Lag STOP", statuses["STOP"], listed(lag_status="STOP"), attention(statuses["STOP"])),
        Figure("Lag ERR", statuses["ERR"], listed(lag_status="ERR"), attention(statuses["ERR"])),
        Figure("Lag WARN", statuses["WARN"], listed(lag_status="WARN"), attention(statuses["WARN"], "warn")),
    ]
    return Panel("Consumer groups", figures, note=f"As of {round(snapshot.age_s)} s ago.", order=30)


groups_panel.panel_title = "Consumer groups"
