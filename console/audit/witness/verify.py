"""audit_verify's check: the database chain, then the database against the witness topic; each run is stored."""

from __future__ import annotations

from collections.abc import Iterator

from django.utils import timezone

from console.audit.models import AuditCheck, AuditEvent
from console.audit.selectors import audit_chain_report
from console.audit.witness.compare import compare
from console.audit.witness.config import witness_config
from console.audit.witness.records import Link, NotAWitnessRecord, event_link, record_link
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from console.kafka.errors import KafkaGatewayError, TopicNotFound

PAGE = 2000


def witness_links(gateway, topic: str, unreadable: list[int]) -> Iterator[Link]:
    """The topic's committed records in offset order, page by page (read_committed: aborted batches of fenced
    publishers never show). Records that are no audit event go to `unreadable` by offset. A missing topic is an
    empty witness."""
    try:
        tail = gateway.last_committed_record(topic)
    except TopicNotFound:
        return
    offset, end = tail.log_start, tail.stable_end
    while offset < end:
        page = gateway.read_records(topic, 0, start=offset, limit=PAGE, end=end, timeout=gateway.timeout,
                                    isolation="read_committed")
        if not page:
            return
        for record in page:
            try:
                yield record_link(record)
            except NotAWitnessRecord:
                unreadable.append(record.offset)
        offset = page[-1].offset + 1


def audit_check_run() -> AuditCheck:
    """Walks the chain (console.audit.chain), then compares every row with the witness topic
    (console.audit.witness.compare) and stores the outcome: the audit page and /health show the latest. A witness
    that cannot be read fails the check with the reason; a switched-off witness leaves the chain check alone."""
    chain = audit_chain_report()
    check = AuditCheck(checked_at=timezone.now(), events=chain.count, chain_problems=list(chain.problems))
    config = witness_config()
    if config is not None:
        check.witness_cluster, check.witness_topic = config.cluster, config.topic
        unreadable: list[int] = []
        events = AuditEvent.objects.order_by("seq").iterator(chunk_size=PAGE)
        try:
            gateway = cluster_admin(config.cluster)
            comparison = compare(map(event_link, events), witness_links(gateway, config.topic, unreadable),
                                 unreadable_offsets=unreadable)
        except (KafkaGatewayError, ConsoleError) as exc:
            check.witness_error = exc.message
        else:
            check.findings = [f.as_json() for f in comparison.findings]
            check.witness_records = comparison.witness_records
            check.witness_first_seq, check.witness_last_seq = comparison.witness_first_seq, comparison.witness_last_seq
            check.unpublished = comparison.unpublished
        finally:
            events.close()  # a comparison cut short leaves a database cursor open otherwise
    check.ok = not check.chain_problems and not check.findings and not check.witness_error
    check.save()
    return check
