"""Replays of an offset range with Spark (`manage.py replay`): their range previewed, submitted, listed, followed,
cancelled."""

from __future__ import annotations

from typing import Literal

from django.shortcuts import get_object_or_404
from ninja import Query, Router, Schema, Status
from pydantic import Field

from api.access import allow
from api.pagination import page_after
from api.schemas import PROBLEMS, REASON, Page, limit_field
from changes.serializers import change_json
from console.accounts.roles import Role
from console.audit.actor import Actor
from sparkjobs.asking import replay_proposal
from sparkjobs.models import ReplayJob
from sparkjobs.selectors import resolve_range
from sparkjobs.serializers import replay_json, replay_range_json
from sparkjobs.services import replay_cancel, replay_submit

router = Router(tags=["replays"])


class ReplayRange(Schema):
    topic: str = Field(min_length=1)
    partitions: list[int] | None = Field(None, description="default: all")
    start: str = Field(description="earliest | offsets:P=O,... | timestamp:ISO | group:G | reset:AUDIT_EVENT_ID")
    end: str = Field("latest", description="latest | offsets:P=O,... | timestamp:ISO")
    isolation: Literal["read_committed", "read_uncommitted"] = "read_committed"


class ReplaySubmit(ReplayRange):
    sink: Literal["jsonl", "parquet", "topic"]
    sink_topic: str = ""
    sink_cluster: str = Field("", description="a topic sink on another registered cluster (default: this one)")
    output: str = Field("", description="file sinks: s3a://BUCKET/PREFIX (default: REPLAY_OUTPUT_DIR)")
    keep_partitions: bool = False
    filter: str = Field("", description="a Spark SQL boolean expression over key, value, headers, ...")
    reason: str = REASON


@router.post("/clusters/{cluster}/replays/preview", response={200: dict, **PROBLEMS}, summary="Preview a replay")
def replay_preview(request, cluster: str, body: ReplayRange):
    """The range resolved to offsets now, per partition, and the records it holds. A submit resolves it again (a
    `latest` end moves as producers write); the job keeps the offsets it used."""
    allow(request, cluster=cluster)
    return replay_range_json(body.topic, resolve_range(cluster, body.topic, body.partitions, body.start, body.end,
                                                       isolation=body.isolation))


@router.post("/clusters/{cluster}/replays", response={201: dict, 202: dict, **PROBLEMS}, summary="Submit a replay")
def replay_new(request, cluster: str, body: ReplaySubmit):
    """`manage.py replay` (operator): bounds resolved to offsets, the job queued for a worker, audited. Into a
    protected topic: 202 and the change request made instead (its range pinned to the offsets resolved now)."""
    allow(request, role=Role.OPERATOR, cluster=cluster, write=True)
    if body.sink_cluster:
        allow(request, role=Role.OPERATOR, cluster=body.sink_cluster, write=True)
    change = replay_proposal(actor=Actor.from_request(request), cluster=cluster, topic=body.topic,
                             partitions=body.partitions, start=body.start, end=body.end, sink=body.sink,
                             sink_topic=body.sink_topic, sink_cluster=body.sink_cluster,
                             keep_partitions=body.keep_partitions, filter_expr=body.filter, isolation=body.isolation,
                             reason=body.reason)
    if change is not None:
        return Status(202, change_json(change))
    job = replay_submit(actor=Actor.from_request(request), cluster=cluster, topic=body.topic,
                        partitions=body.partitions, start=body.start, end=body.end, sink=body.sink,
                        sink_topic=body.sink_topic, sink_cluster=body.sink_cluster,
                        keep_partitions=body.keep_partitions, filter_expr=body.filter, isolation=body.isolation,
                        output_uri=body.output, reason=body.reason)
    return Status(201, replay_json(job))


class ReplayListQuery(Schema):
    cursor: str | None = None
    limit: int = limit_field()


@router.get("/clusters/{cluster}/replays", response={200: Page, **PROBLEMS}, summary="List replays")
def replay_list(request, cluster: str, query: Query[ReplayListQuery]):
    """The cluster's replays, newest first."""
    allow(request, cluster=cluster)
    jobs = [replay_json(job) for job in ReplayJob.objects.filter(cluster=cluster).select_related("created_by")]
    # Newest first: the key is the negated id, so that the sorted order holds.
    return page_after(jobs, key=lambda j: -j["job"], cursor=query.cursor, limit=query.limit)


@router.get("/clusters/{cluster}/replays/{int:job_id}", response={200: dict, **PROBLEMS},
            summary="A replay's state and result")
def replay_status(request, cluster: str, job_id: int):
    """What `manage.py replay --wait` prints once the job ended: state, progress, counts, output, error."""
    allow(request, cluster=cluster)
    return replay_json(get_object_or_404(ReplayJob, pk=job_id, cluster=cluster))


class Cancel(Schema):
    reason: str = REASON


@router.post("/clusters/{cluster}/replays/{int:job_id}/cancel", response={200: dict, **PROBLEMS},
             summary="Cancel a replay")
def replay_stop(request, cluster: str, job_id: int, body: Cancel):
    """The worker stops the Spark driver; the job ends as cancelled within seconds (operator)."""
    allow(request, role=Role.OPERATOR, cluster=cluster, write=True)
    get_object_or_404(ReplayJob, pk=job_id, cluster=cluster)
    return replay_json(replay_cancel(actor=Actor.from_request(request), job_id=job_id, reason=body.reason))
