"""audit_verify's check: the database chain, then the database against the witness topic; each run is stored."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

from django.utils import timezone

from console.audit.models import AuditCheck, AuditEvent, WitnessState
from console.audit.selectors import audit_chain_report
from console.witness.compare import Comparison, Finding, Kind, compare
from console.witness.config import witness_config
from console.witness.loss import (
    expiry_could_explain, find_loss, loss_raise, retention_limits, topic_view,
)
from console.witness.records import Link, NotAWitnessRecord, event_link, record_link
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.types import CommittedTail

PAGE = 2000
# A publisher's commit returns before the coordinator's markers reach the partition; until they do, the stable end
# sits below the log end. Markers take milliseconds (seconds on a loaded host); a transaction still open after this
# is a hanging one, which the publisher and find_loss deal with.
SETTLE_S = 10.0
SETTLE_PAUSE_S = 0.2
# Empty pages in a row below the stable end before the read counts as failed: a loaded broker may answer a fetch
# late, and a partial read must never pass for a short witness.
EMPTY_PAGES = 3
MSG_SHORT_READ = ("The witness topic '{topic}' could not be read to its end: offset {offset} of {end} after "
                  "{tries} tries. Nothing was concluded; run the check again.")


def witness_links(gateway, topic: str, unreadable: list[int], tail: CommittedTail | None) -> Iterator[Link]:
    """The topic's committed records in offset order, page by page (read_committed: aborted batches of fenced
    publishers never show), up to `tail`'s stable end. Records that are no audit event go to `unreadable` by
    offset. A missing topic (`tail` None) is an empty witness."""
    if tail is None:
        return
    offset, end = tail.log_start, tail.stable_end
    empty = 0
    while offset < end:
        page = gateway.read_records(topic, 0, start=offset, limit=PAGE, end=end, timeout=gateway.timeout,
                                    isolation="read_committed")
        if not page:
            if tail.last is None or offset > tail.last.offset:
                return  # only transaction markers and aborted batches remain below the stable end
            empty += 1
            if empty >= EMPTY_PAGES:
                raise ConsoleError(MSG_SHORT_READ.format(topic=topic, offset=offset, end=end, tries=empty))
            continue
        empty = 0
        for record in page:
            try:
                yield record_link(record)
            except NotAWitnessRecord:
                unreadable.append(record.offset)
        offset = page[-1].offset + 1


def settled_view(gateway, topic: str):
    """topic_view once a just-committed transaction's markers have landed (at most SETTLE_S): a check right
    after a publish must see what was published, not an open transaction."""
    deadline = time.monotonic() + SETTLE_S
    tail, view = topic_view(gateway, topic)
    while view is not None and view.open_transaction and time.monotonic() < deadline:
        time.sleep(SETTLE_PAUSE_S)
        tail, view = topic_view(gateway, topic)
    return tail, view


def absence_rule(*, log_start: int, retention_ms: int, retention_bytes: int, accepted_through: int,
                 now: datetime) -> Callable[[Link], bool]:
    """Whether a database row older than the topic's first record may be absent from the topic: accepted by a
    reset, or removed by its retention: a size limit can remove anything, a time limit only what is older than it
    (a record's timestamp is never older than its event). A topic whose log still starts at 0 removed nothing,
    and a purge (DeleteRecords) under infinite retention explains nothing: both are reported."""
    cutoff = now - timedelta(milliseconds=retention_ms) if retention_ms >= 0 else None

    def explained(link: Link) -> bool:
        if link.seq <= accepted_through:
            return True
        if log_start == 0:
            return False
        if retention_bytes >= 0:
            return True
        created = link.body.get("created_at")
        return cutoff is not None and isinstance(created, str) and datetime.fromisoformat(created) < cutoff

    return explained


def _missing_from_both(state: WitnessState | None, comparison: Comparison) -> Finding | None:
    """Events the high-water mark says were published, beyond both the database's newest row and the topic's
    last record: the newest rows removed while the topic lost them too."""
    if state is None:
        return None
    reach = max(comparison.db_last_seq or 0, comparison.witness_last_seq or 0)
    if state.high_seq <= reach:
        return None
    return Finding(Kind.MISSING_TAIL, ((reach + 1, state.high_seq),))


def _merge(findings: list[Finding], extra: list[Finding]) -> list[Finding]:
    """Adds `extra` to the findings of the same kind, joining overlapping or adjacent ranges."""
    ranges: dict[Kind, list[tuple[int, int]]] = {}
    for finding in [*findings, *extra]:
        ranges.setdefault(finding.kind, []).extend(finding.ranges)
    merged = []
    for kind, runs in ranges.items():
        joined: list[tuple[int, int]] = []
        for first, last in sorted(runs):
            if joined and first <= joined[-1][1] + 1:
                joined[-1] = (joined[-1][0], max(joined[-1][1], last))
            else:
                joined.append((first, last))
        merged.append(Finding(kind, tuple(joined)))
    return merged


def audit_check_run() -> AuditCheck:
    """Walks the chain (console.audit.chain), then compares every row with the witness topic
    (console.witness.compare) and stores the outcome: the audit page and /health show the latest. A witness
    that cannot be read fails the check with the reason; a switched-off witness leaves the chain check alone.
    A topic holding less than the publisher's high-water mark raises the witness alarm (console.witness.loss)
    as the publisher would, and a raised alarm is a finding until audit_witness_reset."""
    chain = audit_chain_report()
    check = AuditCheck(checked_at=timezone.now(), events=chain.count, chain_problems=list(chain.problems))
    config = witness_config()
    if config is not None:
        check.witness_cluster, check.witness_topic = config.cluster, config.topic
        state = WitnessState.objects.filter(cluster=config.cluster, topic=config.topic).first()
        unreadable: list[int] = []
        events = AuditEvent.objects.order_by("seq").iterator(chunk_size=PAGE)
        try:
            gateway = cluster_admin(config.cluster)
            tail, view = settled_view(gateway, config.topic)
            if state is not None and not state.lost:
                loss = find_loss(state, view,
                                 expiry_explains=lambda: expiry_could_explain(gateway, config.topic, state))
                if loss is not None:
                    loss_raise(state, loss)
            retention_ms, retention_bytes = retention_limits(gateway, config.topic) if tail else (-1, -1)
            explained = absence_rule(log_start=tail.log_start if tail else 0, retention_ms=retention_ms,
                                     retention_bytes=retention_bytes,
                                     accepted_through=state.accepted_through if state else 0, now=timezone.now())
            comparison = compare(map(event_link, events), witness_links(gateway, config.topic, unreadable, tail),
                                 unreadable_offsets=unreadable, absence_explained=explained)
        except (KafkaGatewayError, ConsoleError) as exc:
            check.witness_error = exc.message
        else:
            extra = [f for f in [_missing_from_both(state, comparison)] if f is not None]
            if state is not None and state.lost:
                extra.append(Finding(Kind.WITNESS_LOST, ((state.lost_first_seq, state.lost_last_seq),)))
            check.findings = [f.as_json() for f in _merge(comparison.findings, extra)]
            check.witness_records = comparison.witness_records
            check.witness_first_seq, check.witness_last_seq = comparison.witness_first_seq, comparison.witness_last_seq
            check.unpublished = comparison.unpublished
        finally:
            events.close()  # a comparison cut short leaves a database cursor open otherwise
    check.ok = not check.chain_problems and not check.findings and not check.witness_error
    check.save()
    return check
