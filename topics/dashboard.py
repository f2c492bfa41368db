"""The topics panel of the cluster dashboard: counts from the shared topic table (never a fresh scan)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.urls import reverse

from console.clusters.dashboard import Figure, Panel, attention
from topics.listing import topic_table_snapshot


def topics_panel(cluster: str) -> Panel:
    snapshot = topic_table_snapshot(cluster)
    url = reverse("topics:list", args=[cluster])
    if snapshot is None:
        return Panel("Topics", [Figure("Topics", None, url)], note="The topic table is being built.", order=20)
    rows = [r for r in snapshot.rows if not r.internal]
    under = sum(1 for r in rows if r.under_replicated)
    offline = sum(1 for r in rows if r.offline)
    figures = [
        Figure("Topics", len(rows), url),
        Figure("Partitions", sum(r.partitions for r in rows), url),
        Figure("Under-replicated topics", under, url + "?" + urlencode({"sort": "under_replicated", "desc": "1"}),
               attention(under, "warn")),
        Figure("Topics with offline partitions", offline, url + "?" + urlencode({"sort": "under_replicated", "desc": "1"}),
               attention(offline)),
    ]
    return Panel("Topics", figures, note=f"As of {round(snapshot.age_s)} s ago.", order=20)


topics_panel.panel_title = "Topics"
