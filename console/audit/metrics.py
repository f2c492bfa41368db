"""The audit family of /metrics (events by action and outcome), registered from AuditConfig.ready()."""

from __future__ import annotations

import threading
from collections.abc import Iterator

from django.db.models import Count
from prometheus_client.core import Metric

from console.audit.models import AuditEvent
from console.metrics.sources import ScrapeOptions, counter

_audit_lock = threading.Lock()
_audit_counted: tuple[int, str, dict[tuple[str, str], int]] = (0, "", {})  # (seq, its hash, counts up to it)


def audit_counts() -> dict[tuple[str, str], int]:
    """Events per (action, outcome). The log only grows and is chained (each row's hash covers every row before
    it), so counts up to a sequence number stay right for as long as the row there keeps its hash: a scrape counts
    only the rows appended since the last one, in an index range, instead of a log that grows for years. A
    sequence number is taken only after the one before it is committed, so no row below the head can appear later."""
    global _audit_counted
    with _audit_lock:
        seq, hash_, counts = _audit_counted
        head = AuditEvent.objects.order_by("-seq").values_list("seq", "hash").first()
        if head is None:
            _audit_counted = (0, "", {})
            return {}
        if head == (seq, hash_):
            return counts
        if not (seq and head[0] > seq and AuditEvent.objects.filter(seq=seq, hash=hash_).exists()):
            seq, counts = 0, {}  # another log (a new database, a test's rollback): count it from the start
        # order_by() drops the model's ordering, which would otherwise split the groups.
        new = (AuditEvent.objects.filter(seq__gt=seq, seq__lte=head[0]).order_by().values("action", "outcome")
               .annotate(n=Count("id")).values_list("action", "outcome", "n"))
        counts = dict(counts)
        for action, outcome, n in new:
            counts[(action, outcome)] = counts.get((action, outcome), 0) + n
        _audit_counted = (head[0], head[1], counts)
        return counts


def audit_metrics(options: ScrapeOptions) -> Iterator[Metric]:
    audit = counter("audit_events_total", "Audit events by action and outcome.", ["action", "outcome"])
    for (action, outcome), n in sorted(audit_counts().items()):
        audit.add_metric([action, outcome], n)
    yield audit
