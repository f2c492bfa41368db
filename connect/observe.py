"""Beat's look at every connector (connect.tasks.observe_connectors): the state of each connector and task is kept
in ConnectorSnapshot (what alerts and /metrics read, so neither ever asks Connect) and every change of state is a
ConnectorEvent (a connector page's history). A Connect cluster that does not answer keeps its snapshots, with the
error on its registration."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from connect.models import ConnectCluster, ConnectorEvent, ConnectorSnapshot
from connect.registration import connect_client
from connect.selectors import scrubbed_status
from gateway.kafka_connect.errors import ConnectError
from gateway.kafka_connect.types import ConnectorOverview
from console.errors import ConsoleError

# A connector page shows at most its last 200 changes; older ones go, so a flapping connector cannot grow the table
# without bound.
HISTORY_KEPT = timedelta(days=30)


@dataclass(frozen=True)
class ObserveResult:
    connect_clusters: int
    connectors: int
    changes: int
    errors: dict[str, str]


def _tasks_json(overview: ConnectorOverview) -> list[dict]:
    return [{"id": t.id, "state": t.state, "worker_id": t.worker_id, "trace": t.trace} for t in overview.status.tasks]


def _scrubbed(overview: ConnectorOverview) -> ConnectorOverview:
    """Traces without the secrets of the connector's configuration (by name and shape; asking every plugin for the
    passwords it declares would cost a request each per look): they are stored, shown and sent in alerts."""
    return replace(overview, status=scrubbed_status(overview.status, overview.info.config, frozenset()))


def _record(registration: ConnectCluster, overviews: dict[str, ConnectorOverview], now) -> int:
    """Snapshots and events for one Connect cluster's answer; returns how many states changed."""
    key = {"cluster": registration.cluster, "connect": registration.name}
    known = {s.connector: s for s in ConnectorSnapshot.objects.filter(**key)}
    events: list[ConnectorEvent] = []
    for name, overview in overviews.items():
        overview = _scrubbed(overview)
        status, previous = overview.status, known.pop(name, None)
        tasks = _tasks_json(overview)
        old_tasks = {t["id"]: t["state"] for t in (previous.tasks if previous else [])}
        if previous is None or previous.state != status.state:
            events.append(ConnectorEvent(**key, connector=name, state=status.state,
                                         previous=previous.state if previous else "", worker_id=status.worker_id,
                                         trace=status.trace, at=now))
        for task in status.tasks:
            if old_tasks.get(task.id) != task.state:
                events.append(ConnectorEvent(**key, connector=name, task=task.id, state=task.state,
                                             previous=old_tasks.get(task.id, ""), worker_id=task.worker_id,
                                             trace=task.trace, at=now))
        changed = previous is None or previous.state != status.state or old_tasks != {t["id"]: t["state"]
                                                                                        for t in tasks}
        ConnectorSnapshot.objects.update_or_create(**key, connector=name, defaults={
            "type": overview.info.type, "plugin": overview.info.plugin, "state": status.state,
            "worker_id": status.worker_id, "trace": status.trace, "tasks": tasks, "seen_at": now,
            **({"since": now} if changed else {})})
    for name, gone in known.items():  # deleted since the last look
        events.append(ConnectorEvent(**key, connector=name, state="DELETED", previous=gone.state, at=now))
        gone.delete()
    ConnectorEvent.objects.bulk_create(events)
    return len(events)


def connectors_observe(cluster: str | None = None) -> ObserveResult:
    """Asks every registered Connect cluster (of `cluster`, or of all) at once, then stores what changed."""
    registrations = list(ConnectCluster.objects.filter(**({"cluster": cluster} if cluster else {})))

    def ask(registration: ConnectCluster):
        try:
            return registration, connect_client(registration).connectors(), ""
        except (ConnectError, ConsoleError) as exc:
            return registration, None, exc.message

    answers = []
    if registrations:
        with ThreadPoolExecutor(max_workers=min(8, len(registrations))) as pool:
            answers = list(pool.map(ask, registrations))
    now = timezone.now()
    connectors = changes = 0
    errors = {}
    for registration, overviews, error in answers:
        with transaction.atomic():
            if overviews is not None:
                changes += _record(registration, overviews, now)
                connectors += len(overviews)
                ConnectCluster.objects.filter(pk=registration.pk).update(observed_at=now, observe_error="")
            else:
                errors[f"{registration.cluster}/{registration.name}"] = error
                ConnectCluster.objects.filter(pk=registration.pk).update(observe_error=error)
    ConnectorEvent.objects.filter(at__lt=now - HISTORY_KEPT).delete()
    return ObserveResult(len(registrations), connectors, changes, errors)
