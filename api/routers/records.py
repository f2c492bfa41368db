"""Records: read a range, search it, produce one: `manage.py messages read|search|produce`, masked for the token's
user as the pages mask them for theirs."""

from __future__ import annotations

from typing import Literal

from django.conf import settings
from ninja import Query, Router, Schema, Status
from pydantic import Field

from api.access import allow
from api.schemas import PROBLEMS, REASON
from console.accounts.roles import Role
from console.audit.actor import Actor
from gateway.kafka.records_io.filters import check_filter
from gateway.kafka.types import ScanFilter
from records import services
from records.search import SearchSpec, parse_bound, parse_fields, parse_partitions, parse_time_ms
from records.serializers import scan_json, written_json

router = Router(tags=["records"])
# The search page's own bounds (records/forms.py), and a time budget that fits one HTTP request.
MAX_MATCHES = 10_000
MAX_RECORDS = 100_000_000


def _max_seconds():
    return Field(20.0, gt=0, le=settings.API_SCAN_MAX_SECONDS,
                 description=f"time budget (at most {settings.API_SCAN_MAX_SECONDS:g} s in one request)")


class Range(Schema):
    partitions: str = Field("", description="e.g. 0,2 (default: all)")
    start: str = Field("earliest", alias="from", description="earliest, an offset, or a time (2026-11-21T03:00:00Z)")
    end: str = Field("latest", alias="to", description="latest, an offset, or a time")
    newest_first: bool = False
    isolation: Literal["read_committed", "read_uncommitted"] = "read_committed"
    max_seconds: float = _max_seconds()


class ReadQuery(Range):
    limit: int = Field(50, ge=1, le=MAX_MATCHES, description="records to return (the shell's default: 50)")


class Search(Range):
    key: str = Field("", description="key contains")
    key_regex: str = ""
    value: str = Field("", description="value contains (decoded JSON for registry records)")
    value_regex: str = ""
    field: list[str] = Field(default_factory=list, description="PATH=VALUE: the decoded value's field equals")
    jsonpath: str = ""
    header: str = Field("", description="NAME[=CONTAINS]")
    since: str = Field("", description="skip records with a timestamp before this time")
    until: str = Field("", description="skip records with a timestamp after this time")
    max_records: int = Field(MAX_RECORDS, ge=1, le=MAX_RECORDS, description="records budget")
    limit: int = Field(1000, ge=1, le=MAX_MATCHES, description="matches to return at most (the shell's: 1000)")


def _scan(request, cluster: str, topic: str, spec: SearchSpec) -> dict:
    return scan_json(cluster, topic, spec, request.user)


def _spec(topic: str, query: Range, scan_filter: ScanFilter, *, limit: int, max_records: int) -> SearchSpec:
    return SearchSpec(topic=topic, partitions=parse_partitions(query.partitions),
                      start=parse_bound(query.start, "earliest"), end=parse_bound(query.end, "latest"),
                      filter=scan_filter, newest_first=query.newest_first, isolation=query.isolation,
                      max_records=max_records, max_seconds=query.max_seconds, max_matches=limit)


@router.get("/clusters/{cluster}/topics/{topic}/records", response={200: dict, **PROBLEMS}, summary="Read records")
def records_read(request, cluster: str, topic: str, query: Query[ReadQuery]):
    """`manage.py messages read --format json`: the records (masked for you) and the scan's counts."""
    allow(request, cluster=cluster)
    return _scan(request, cluster, topic, _spec(topic, query, ScanFilter(), limit=query.limit,
                                                max_records=MAX_RECORDS))


@router.post("/clusters/{cluster}/topics/{topic}/records/search", response={200: dict, **PROBLEMS},
             summary="Search records")
def records_search(request, cluster: str, topic: str, body: Search):
    """`manage.py messages search --format json`: no consumer group, nothing committed. A masked part cannot be
    searched by the roles it is masked for."""
    allow(request, cluster=cluster)
    name, _, contains = body.header.partition("=")
    scan_filter = ScanFilter(
        key_contains=body.key, key_regex=body.key_regex, value_contains=body.value, value_regex=body.value_regex,
        value_fields=parse_fields(body.field), value_jsonpath=body.jsonpath, header_name=name,
        header_contains=contains,
        ts_from_ms=parse_time_ms(body.since, f"since '{body.since}' is not a time.") if body.since else None,
        ts_to_ms=parse_time_ms(body.until, f"until '{body.until}' is not a time.") if body.until else None)
    check_filter(scan_filter)
    return _scan(request, cluster, topic, _spec(topic, body, scan_filter, limit=body.limit,
                                                max_records=body.max_records))


class Produce(Schema):
    key: str | None = Field(None, description="the key as text (null: no key)")
    value: str | None = Field(None, description="the value as text (null: a tombstone)")
    partition: int | None = Field(None, ge=0, description="default: by the key's hash")
    headers: list[tuple[str, str]] = Field(default_factory=list)
    key_subject: str = Field("", description="encode the key (JSON) with this registry subject")
    value_subject: str = Field("", description="encode the value (JSON) with this subject")
    value_version: int | None = Field(None, description="subject version (default latest)")
    reason: str = REASON


@router.post("/clusters/{cluster}/topics/{topic}/records", response={201: dict, **PROBLEMS},
             summary="Produce a record")
def record_produce(request, cluster: str, topic: str, body: Produce):
    """`manage.py messages produce --format json` (operator): where the record was written."""
    allow(request, role=Role.OPERATOR, cluster=cluster, write=True)
    written = services.record_produce(
        actor=Actor.from_request(request), cluster=cluster, topic=topic,
        key=services.Payload(body.key, subject=body.key_subject),
        value=services.Payload(body.value, subject=body.value_subject, version=body.value_version),
        headers=[tuple(h) for h in body.headers], partition=body.partition, reason=body.reason)
    return Status(201, written_json(written))
