"""The alerts panel of the cluster dashboard: what is firing or pending on this cluster now."""

from __future__ import annotations

from django.urls import reverse

from alerts.models import Alert
from console.clusters.dashboard import Figure, Panel, attention


def alerts_panel(cluster: str) -> Panel:
    open_alerts = Alert.objects.filter(cluster=cluster, state__in=[Alert.FIRING, Alert.PENDING])
    firing = sum(1 for state in open_alerts.values_list("state", flat=True) if state == Alert.FIRING)
    pending = open_alerts.count() - firing
    url = reverse("alerts:page")
    return Panel("Alerts", [Figure("Firing", firing, url, attention(firing)),
                            Figure("Pending", pending, url, attention(pending, "warn"))], order=50)


alerts_panel.panel_title = "Alerts"
