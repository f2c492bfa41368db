"""The Connect panel of the cluster dashboard: connector states as the console last saw them (the snapshots its
observer stores), not a fresh call to every worker."""

from __future__ import annotations

from collections import Counter

from django.urls import reverse

from connect.models import ConnectCluster, ConnectorSnapshot
from console.clusters.dashboard import Figure, Panel, attention


def connect_panel(cluster: str) -> Panel | None:
    if not ConnectCluster.objects.filter(cluster=cluster).exists():
        return None
    url = reverse("connect:list", args=[cluster])
    snapshots = list(ConnectorSnapshot.objects.filter(cluster=cluster).values_list("state", "tasks"))
    states = Counter(state for state, _ in snapshots)
    failed_tasks = sum(1 for _, tasks in snapshots for task in tasks or () if task.get("state") == "FAILED")
    figures = [
        Figure("Connectors", len(snapshots), url),
        Figure("Running", states["RUNNING"], url + "?state=RUNNING"),
        Figure("Failed", states["FAILED"], url + "?state=FAILED", attention(states["FAILED"])),
        Figure("Failed tasks", failed_tasks, url, attention(failed_tasks)),
        Figure("Paused or stopped", states["PAUSED"] + states["STOPPED"], url, ""),
    ]
    return Panel("Connect", figures, order=40)


connect_panel.panel_title = "Connect"
