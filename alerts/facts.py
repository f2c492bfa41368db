"""What the alert rules read: the statuses, samples, generations and health rows the sampler and recorder stored.
A few queries whatever the number of groups; nothing here asks Kafka."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q

from alerts.broker_conditions import BROKER_KINDS, RETENTION, BrokerFacts
from alerts.conditions import (CLASSIC_PROTOCOL, CONNECTOR, LAG, REBALANCES, STATUS, ConnectorFacts, Facts, GroupFacts,
                               RecorderFacts, SweepFacts)
from alerts.models import AlertRule
from brokers import conf as broker_conf
from brokers.models import BrokerState
from connect.models import ConnectorSnapshot
from console.clusters.models import Cluster
from offsets.lag.last_total import LastTotal
from offsets.models import GroupGeneration, GroupLagStatus, GroupTypeSeen, LagSweep, RecorderStatus


def _group_facts(rules: list[AlertRule]) -> tuple[GroupFacts, ...]:
    """The groups a status or lag rule could hold for: those with one of the rules' statuses, or lag above the
    lowest threshold. A rule holds for no other group, so its alerts resolve for the groups left out as they would
    with every group read; with 50,000 groups, reading (and parsing) every one after each sweep was most of the
    evaluation's time."""
    statuses = {status for r in rules if r.kind == STATUS for status in r.statuses}
    thresholds = [r.threshold or 0 for r in rules if r.kind == LAG]
    if not statuses and not thresholds:
        return ()
    candidates = Q(status__in=statuses) if statuses else Q(pk__in=[])
    if thresholds:
        candidates |= Q(lag__gt=min(thresholds))
    rows = (GroupLagStatus.objects.annotate(lag=LastTotal("totals")).filter(candidates)
            .values_list("cluster", "group", "status", "reason", "lag"))
    return tuple(GroupFacts(*row) for row in rows.iterator(2000))


def facts_gather(rules: list[AlertRule], now: datetime) -> Facts:
    clusters = tuple(Cluster.objects.order_by("name").values_list("name", flat=True))
    groups = _group_facts(rules)
    windows = [r.window_minutes or 0 for r in rules if r.kind == REBALANCES]
    generations: dict[tuple[str, str], list[datetime]] = defaultdict(list)
    if windows:
        since = now - timedelta(minutes=max(windows))
        for cluster, group, at in GroupGeneration.objects.filter(time__gte=since).values_list("cluster", "group", "time"):
            generations[(cluster, group)].append(at)
    sweeps = {s.cluster: SweepFacts(s.last_ok_at, s.last_error) for s in LagSweep.objects.all()}
    recorders = {r.cluster: RecorderFacts(r.state, r.recorded_up_to, r.detail) for r in RecorderStatus.objects.all()}
    connectors = ()
    if any(r.kind == CONNECTOR for r in rules):  # beat's last observation of every connector (connect/observe.py)
        connectors = tuple(ConnectorFacts(s.cluster, s.connect, s.connector, s.state, s.worker_id, s.trace,
                                          tuple(s.tasks)) for s in ConnectorSnapshot.objects.iterator(2000))
    brokers = (_broker_facts(now, retention=any(r.kind == RETENTION for r in rules))
               if any(r.kind in BROKER_KINDS for r in rules) else ())
    classic = {}
    if any(r.kind == CLASSIC_PROTOCOL for r in rules):  # as the lag sweeps last listed them (offsets/protocols/observed.py)
        classic = {(cluster, group): since for cluster, group, since in GroupTypeSeen.objects.filter(
            group_type="classic", simple=False).values_list("cluster", "group", "since").iterator(5000)}
    return Facts(now=now, clusters=clusters, groups=groups, generations=dict(generations), sweeps=sweeps,
                 recorders=recorders, connectors=connectors, brokers=brokers, classic_groups=classic,
                 sample_interval_s=float(settings.LAG_SAMPLE_INTERVAL_S))


def _broker_facts(now: datetime, *, retention: bool = False) -> tuple[BrokerFacts, ...]:
    """Each broker's newest figures, if its JMX gave them at its latest reading and within three intervals; with
    `retention`, its partitions' shares of retention.bytes too (left unread otherwise: they may be thousands)."""
    fresh_after = now - timedelta(seconds=3 * broker_conf.sample_interval_s())
    found = []
    states = BrokerState.objects.order_by("cluster", "broker")
    for s in states if retention else states.defer("retention_shares"):
        failing = s.last_error_at is not None and (s.last_ok_at is None or s.last_error_at > s.last_ok_at)
        answered = not failing and s.last_ok_at is not None and s.last_ok_at >= fresh_after
        found.append(BrokerFacts(s.cluster, s.broker, s.latest if answered else {}, answered,
                                 s.retention_shares if answered and retention else {}))
    return tuple(found)
