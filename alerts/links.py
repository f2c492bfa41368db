"""Where an alert's subject lives in the console: a group's page, a connector's, a topic's partitions, a broker's or
the cluster's."""

from __future__ import annotations

from django.urls import reverse

from alerts.broker_conditions import BROKER_KINDS, RETENTION

CONNECTOR = "connector"


def alert_path(kind: str, cluster: str, group: str) -> str:
    if kind == CONNECTOR:
        connect, _, connector = group.partition("/")
        return reverse("connect:connector", args=[cluster, connect, connector])
    if kind == RETENTION:  # "topic-partition": the topic's partitions tab
        topic = group.rpartition("-")[0]
        return reverse("topics:detail", args=[cluster, topic]) + "?tab=partitions"
    if kind in BROKER_KINDS:
        broker = group.removeprefix("broker ")
        return (reverse("brokermetrics:broker", args=[cluster, int(broker)]) if broker.isdigit()
                else reverse("brokermetrics:overview", args=[cluster]))
    if group:
        return reverse("offsets:detail", args=[cluster, group])
    return reverse("clusters:detail", args=[cluster])
