"""Topics, their configs and their records' purge: what `manage.py topics` does, on the same selectors and
services."""

from __future__ import annotations

from ninja import Query, Router, Schema, Status
from pydantic import Field

from api.access import allow
from api.pagination import page_after
from api.schemas import PROBLEMS, REASON, Page, limit_field
from changes.actions.topics import CONFIG, DELETE, PURGE, config_kwargs, purge_kwargs
from changes.proposals import propose_if_protected
from changes.serializers import change_json
from console.accounts.roles import Role
from console.audit.actor import Actor
from topics import selectors, services
from topics.serializers import purge_rows_json, topic_detail_json, topic_rows_json

router = Router(tags=["topics"])


class TopicListQuery(Schema):
    search: str = Field("", description="substring, or a regular expression with regex=true")
    regex: bool = False
    include_internal: bool = False
    cursor: str | None = None
    limit: int = limit_field()


@router.get("/clusters/{cluster}/topics", response={200: Page, **PROBLEMS}, summary="List topics")
def topic_list(request, cluster: str, query: Query[TopicListQuery]):
    """The rows of `manage.py topics list --format json` (the shared topic table), by name, a page at a time."""
    allow(request, cluster=cluster)
    rows = selectors.filter_topics(selectors.topic_table(cluster), query=query.search, regex=query.regex,
                                   include_internal=query.include_internal)
    return page_after(topic_rows_json(rows), key=lambda r: r["name"], cursor=query.cursor, limit=query.limit)


@router.get("/clusters/{cluster}/topics/{topic}", response={200: dict, **PROBLEMS}, summary="Describe a topic")
def topic_describe(request, cluster: str, topic: str):
    """`manage.py topics describe --format json`: partitions with leader, replicas, ISR and offsets; every config
    with its source (a sensitive value is null)."""
    allow(request, cluster=cluster)
    return topic_detail_json(selectors.topic_detail(cluster, topic))


class TopicCreate(Schema):
    name: str = Field(min_length=1, max_length=249)
    partitions: int = Field(ge=1)
    replication_factor: int = Field(1, ge=1)
    configs: dict[str, str] = Field(default_factory=dict)
    override_policy: bool = Field(False, description="go ahead although topic policies refuse it (admins)")
    reason: str = REASON


@router.post("/clusters/{cluster}/topics", response={201: dict, **PROBLEMS}, summary="Create a topic")
def topic_create(request, cluster: str, body: TopicCreate):
    """`manage.py topics create` (admin): validated by the broker and the topic policies first; audited."""
    allow(request, role=Role.ADMIN, cluster=cluster, write=True)
    services.topic_create(actor=Actor.from_request(request), cluster=cluster, name=body.name,
                          partitions=body.partitions, replication_factor=body.replication_factor,
                          configs=body.configs, reason=body.reason, policy_override=body.override_policy)
    return Status(201, {"topic": body.name, "created": True})


class ConfigChange(Schema):
    set: dict[str, str] = Field(default_factory=dict, description="overrides to set")
    delete: list[str] = Field(default_factory=list, description="overrides to remove (back to the broker's value)")
    override_policy: bool = False
    reason: str = REASON


@router.patch("/clusters/{cluster}/topics/{topic}/configs", response={200: dict, 202: dict, **PROBLEMS},
              summary="Change a topic's config overrides")
def topic_configs_alter(request, cluster: str, topic: str, body: ConfigChange):
    """`manage.py topics alter-config --format json` (admin): each changed key as Kafka reads it back. On a
    protected topic: 202 and the change request made instead."""
    allow(request, role=Role.ADMIN, cluster=cluster, write=True)
    change = propose_if_protected(actor=Actor.from_request(request), action=CONFIG, cluster=cluster,
                                  reason=body.reason, kwargs=config_kwargs(topic=topic, set_values=body.set,
                                                                          delete=body.delete,
                                                                          policy_override=body.override_policy))
    if change is not None:
        return Status(202, change_json(change))
    return services.topic_configs_alter(actor=Actor.from_request(request), cluster=cluster, topic=topic,
                                        set_values=body.set, delete=body.delete, reason=body.reason,
                                        policy_override=body.override_policy)


class PartitionsAdd(Schema):
    partitions: int = Field(ge=1, description="the new total")
    override_policy: bool = False
    reason: str = REASON


@router.post("/clusters/{cluster}/topics/{topic}/partitions", response={200: dict, **PROBLEMS},
             summary="Add partitions")
def topic_partitions_add(request, cluster: str, topic: str, body: PartitionsAdd):
    """`manage.py topics add-partitions` (admin): keyed records change partition from then on."""
    allow(request, role=Role.ADMIN, cluster=cluster, write=True)
    services.topic_partitions_add(actor=Actor.from_request(request), cluster=cluster, topic=topic,
                                  new_total=body.partitions, reason=body.reason,
                                  policy_override=body.override_policy)
    return {"topic": topic, "partitions": body.partitions}


class TopicDelete(Schema):
    confirm: str = Field(description="the topic's name again")
    reason: str = REASON


@router.delete("/clusters/{cluster}/topics/{topic}", response={200: dict, 202: dict, **PROBLEMS},
               summary="Delete a topic")
def topic_delete(request, cluster: str, topic: str, query: Query[TopicDelete]):
    """`manage.py topics delete --yes` (admin), confirmed by the topic's name. On a protected topic: 202 and the
    change request made instead."""
    allow(request, role=Role.ADMIN, cluster=cluster, write=True)
    if query.confirm == topic:
        change = propose_if_protected(actor=Actor.from_request(request), action=DELETE, cluster=cluster,
                                      reason=query.reason, kwargs={"topic": topic})
        if change is not None:
            return Status(202, change_json(change))
    services.topic_delete(actor=Actor.from_request(request), cluster=cluster, topic=topic, confirm=query.confirm,
                          reason=query.reason)
    return {"topic": topic, "deleted": True}


class PurgeScope(Schema):
    partitions: list[int] | None = Field(None, description="default: every partition of the topic")
    before: int | None = Field(None, ge=0, description="delete the records below this offset (default: every "
                                                         "record present now)")


class PurgeExecute(PurgeScope):
    reason: str = REASON


@router.post("/clusters/{cluster}/topics/{topic}/purge/preview", response={200: list[dict], **PROBLEMS},
             summary="Preview a purge of records")
def topic_purge_preview(request, cluster: str, topic: str, body: PurgeScope):
    """`manage.py topics purge --dry-run --format json` (admin, as on the topic page): per partition its log start
    and end, the offset the purge would cut below (clamped to the log end) and how many records it would delete."""
    allow(request, role=Role.ADMIN, cluster=cluster)
    return purge_rows_json(services.topic_purge_preview(cluster=cluster, topic=topic, partitions=body.partitions,
                                                        before=body.before))


@router.post("/clusters/{cluster}/topics/{topic}/purge", response={200: list[dict], 202: dict, **PROBLEMS},
             summary="Purge records (DeleteRecords)")
def topic_purge(request, cluster: str, topic: str, body: PurgeExecute):
    """`manage.py topics purge --yes --format json` (admin): DeleteRecords up to the planned offsets, audited with
    each partition's log start before and after; the rows as the preview shows them. On a protected topic: 202 and
    the change request made instead, holding the plan (GET /changes/{id})."""
    allow(request, role=Role.ADMIN, cluster=cluster, write=True)
    actor = Actor.from_request(request)
    change = propose_if_protected(actor=actor, action=PURGE, cluster=cluster, reason=body.reason,
                                  kwargs=purge_kwargs(topic=topic, partitions=body.partitions, before=body.before))
    if change is not None:
        return Status(202, change_json(change))
    return purge_rows_json(services.topic_records_purge(actor=actor, cluster=cluster, topic=topic,
                                                        partitions=body.partitions, before=body.before,
                                                        reason=body.reason))
