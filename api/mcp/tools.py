"""The MCP server's tools (the official `mcp` SDK's MCPServer): what an assistant may read and preview on the
clusters its token reaches, answered by the selectors the pages and the shell use, masked for the token's user;
and two tools that execute a previewed change, refused unless the token allows executing. Every call is audited
(`mcp.call`, or the refusal), and the services audit the changes they make as always.

The tools are async and run the console's (synchronous) code through asgiref's sync_to_async with
thread_sensitive=True: under the HTTP bridge that is the web request's own thread (its database connection), from
stdio one thread for all calls."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from typing import Annotated, Literal

from asgiref.sync import sync_to_async
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from console.accounts.roles import Role, require_role
from console.audit.models import AuditEvent
from console.audit.services import audit_record, audit_refusal
from console.clusters.models import Cluster
from console.clusters.selectors import cluster_get, clusters_health, clusters_json
from console.errors import ConsoleError, PermissionRefused
from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.records_io.filters import check_filter
from gateway.kafka.types import ScanFilter
from console.tokens.auth import REFUSED_ACTION, TokenCall, token_scope_check
from offsets.history.selectors import group_history
from offsets.kinds import kind_for
from offsets.lag.explain import group_lag_explain
from offsets.lag.selectors import RANGES, group_lag_history, group_statuses
from offsets.resets import services as resets
from offsets.resets.preview import reset_preview
from offsets.resets.strategy_input import STRATEGIES, scope_from, strategy_from
from offsets.selectors import groups_of_every_type
from offsets.serializers import (
    group_describe_json, group_listings_json, group_status_json, reset_after_json, reset_preview_json,
)
from records.search import SearchSpec, parse_bound, parse_partitions
from records.serializers import scan_json
from sparkjobs.selectors import resolve_range
from sparkjobs.serializers import replay_json, replay_range_json
from sparkjobs.services import replay_submit
from topics import selectors as topic_selectors
from topics.serializers import topic_detail_json, topic_rows_json

CALL_ACTION = "mcp.call"
MAX_LIST = 500  # an assistant's context is small: lists are cut here, and say so
MAX_RECORDS = 200
MAX_SCAN_S = 20.0
HISTORY_ENTRIES = 20
MSG_NO_CALL = "No API token for this MCP session (the console sets it from the request or from CONSOLE_API_TOKEN)."

# The call's token: checked once per HTTP request, or (stdio) a function that checks it again at every tool call, so
# that a token revoked or expired while an assistant runs stops working at once.
current_call: ContextVar[TokenCall | Callable[[], TokenCall] | None] = ContextVar("mcp_token_call", default=None)
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
EXECUTE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)

server = MCPServer(
    "kafka-console",
    instructions=(
        "Read and preview on the Kafka console's clusters: topics, consumer groups (lag, status with its reasons, "
        "rebalance history, why a group lags), records (masked as for the token's user), and previews of an offset "
        "reset or a replay. Executing a previewed change needs a token that allows it, the operator role and a "
        "reason; a reset must give back its preview's fingerprint."),
)

Cluster_ = Annotated[str, Field(description="a registered cluster's name (list_clusters)")]
Group = Annotated[str, Field(description="the group id")]


def _json(value) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, default=str)


def _cut(items: list, limit: int = MAX_LIST) -> dict:
    return {"items": items[:limit], "total": len(items), "cut": len(items) > limit}


def _call() -> TokenCall:
    call = current_call.get()
    if call is None:
        raise ToolError(MSG_NO_CALL)
    return call() if callable(call) else call


def _run(tool: str, arguments: dict, work, *, cluster: str | None = None, role: Role = Role.VIEWER,
         execute: bool = False):
    """Checks the token and the role, runs `work`, audits the call; a console or gateway error becomes the tool's
    error with the message a page would show."""
    try:
        call = _call()
    except ConsoleError as exc:  # a token revoked or expired since (stdio), or past its rate limit
        raise ToolError(exc.message) from exc
    what = f"mcp:{tool}"
    try:
        token_scope_check(call, what=what, cluster=cluster, write=execute, execute=execute)
        try:
            require_role(call.user, role)
        except PermissionRefused as exc:
            audit_refusal(actor=call.actor, action=REFUSED_ACTION, cluster=cluster or "", target=what, reason="",
                          params={"role": role.group_name, "arguments": arguments}, error=exc.message)
            raise
        if cluster is not None:
            cluster_get(cluster)
        result = work()
    except (ConsoleError, KafkaGatewayError) as exc:
        if not isinstance(exc, PermissionRefused):
            audit_record(actor=call.actor, action=CALL_ACTION, outcome=AuditEvent.Outcome.FAILURE,
                         cluster=cluster or "", target=what, params={"arguments": arguments}, error=exc.message)
        raise ToolError(exc.message) from exc
    audit_record(actor=call.actor, action=CALL_ACTION, outcome=AuditEvent.Outcome.SUCCESS, cluster=cluster or "",
                 target=what, params={"arguments": arguments})
    return _json(result)


async def _tool(tool: str, arguments: dict, work, **checks) -> str:
    return await sync_to_async(_run, thread_sensitive=True)(tool, arguments, work, **checks)


@server.tool(annotations=READ, structured_output=False)
async def list_clusters() -> str:
    """The clusters this token reaches: reachability, broker count, controller."""
    def work():
        token = _call().token
        return clusters_json(clusters_health([c for c in Cluster.objects.all() if token.reaches(c.name)]))
    return await _tool("list_clusters", {}, work)


@server.tool(annotations=READ, structured_output=False)
async def list_topics(cluster: Cluster_, search: str = "", include_internal: bool = False) -> str:
    """Topics with partitions, replication factor, under-replicated and offline partitions, message counts."""
    def work():
        rows = topic_selectors.filter_topics(topic_selectors.topic_table(cluster), query=search,
                                             include_internal=include_internal)
        return _cut(topic_rows_json(rows))
    return await _tool("list_topics", {"cluster": cluster, "search": search}, work, cluster=cluster)


@server.tool(annotations=READ, structured_output=False)
async def describe_topic(cluster: Cluster_, topic: str) -> str:
    """A topic's partitions (leader, replicas, ISR, start and end offsets) and configs with their source."""
    return await _tool("describe_topic", {"cluster": cluster, "topic": topic},
                       lambda: topic_detail_json(topic_selectors.topic_detail(cluster, topic)), cluster=cluster)


@server.tool(annotations=READ, structured_output=False)
async def list_groups(cluster: Cluster_, search: str = "") -> str:
    """Consumer, share and streams groups with their state and type, and each one's lag status when sampled."""
    def work():
        groups, problem = groups_of_every_type(cluster)
        if problem:
            raise ConsoleError(problem)
        listed = [g for g in group_listings_json(sorted(groups, key=lambda g: g.group_id))
                  if search.lower() in g["group"].lower()]
        statuses = group_statuses(cluster, groups=[g["group"] for g in listed[:MAX_LIST]])
        for g in listed[:MAX_LIST]:
            found = statuses.get(g["group"])
            g["status"], g["lag"] = (found.status, found.lag) if found else ("", None)
        return _cut(listed)
    return await _tool("list_groups", {"cluster": cluster, "search": search}, work, cluster=cluster)


@server.tool(annotations=READ, structured_output=False)
async def describe_group(cluster: Cluster_, group: Group) -> str:
    """A group now: per partition its committed offset, log end and lag; its state and members; its lag status
    (OK, WARN, ERR, STOP, BLOCKED) with the reasons; its last rebalances."""
    def work():
        return {"partitions": group_describe_json(cluster, group),
                "state": group_describe_json(cluster, group, state=True),
                "status": group_status_json(group, group_statuses(cluster, group=group).get(group)),
                "rebalances": group_history(cluster, group)[-HISTORY_ENTRIES:]}
    return await _tool("describe_group", {"cluster": cluster, "group": group}, work, cluster=cluster)


@server.tool(annotations=READ, structured_output=False)
async def group_lag_over_time(cluster: Cluster_, group: Group,
                              range: Literal[tuple(RANGES)] = "6h") -> str:  # noqa: A002
    """The group's lag samples per topic over a range (oldest first) and its current status with the reason."""
    return await _tool("group_lag_over_time", {"cluster": cluster, "group": group, "range": range},
                       lambda: group_lag_history(cluster, group, range), cluster=cluster)


@server.tool(annotations=READ, structured_output=False)
async def explain_group_lag(cluster: Cluster_, group: Group) -> str:
    """Why a group lags: its status and reasons, consume against produce rate and time to catch up, where the lag
    sits (skew), rebalances of the last hour and the console's recent changes to it; each finding with evidence."""
    return await _tool("explain_group_lag", {"cluster": cluster, "group": group},
                       lambda: group_lag_explain(cluster, group), cluster=cluster)


def _scan(cluster: str, topic: str, spec: SearchSpec) -> dict:
    return scan_json(cluster, topic, spec, _call().user)


def _spec(topic: str, partitions: str, start: str, end: str, newest_first: bool, limit: int,
          scan_filter: ScanFilter = ScanFilter()) -> SearchSpec:
    return SearchSpec(topic=topic, partitions=parse_partitions(partitions), start=parse_bound(start, "earliest"),
                      end=parse_bound(end, "latest"), filter=scan_filter, newest_first=newest_first,
                      max_seconds=MAX_SCAN_S, max_matches=max(1, min(limit, MAX_RECORDS)))


@server.tool(annotations=READ, structured_output=False)
async def read_records(cluster: Cluster_, topic: str, partitions: str = "", start: str = "earliest",
                       end: str = "latest", newest_first: bool = False,
                       limit: Annotated[int, Field(ge=1, le=MAX_RECORDS)] = 20) -> str:
    """Records of a range (start/end: earliest, latest, an offset or an ISO time), masked as the token's user
    sees them; no consumer group, nothing committed."""
    arguments = {"cluster": cluster, "topic": topic, "partitions": partitions, "start": start, "end": end,
                 "limit": limit}
    return await _tool("read_records", arguments,
                       lambda: _scan(cluster, topic, _spec(topic, partitions, start, end, newest_first, limit)),
                       cluster=cluster)


@server.tool(annotations=READ, structured_output=False)
async def search_records(cluster: Cluster_, topic: str, key_contains: str = "", value_contains: str = "",
                         header: str = "", partitions: str = "", start: str = "earliest", end: str = "latest",
                         newest_first: bool = False, limit: Annotated[int, Field(ge=1, le=MAX_RECORDS)] = 20) -> str:
    """The records of a range whose key or value contains a text (or with a header NAME[=CONTAINS]), masked; a
    masked part cannot be searched."""
    arguments = {"cluster": cluster, "topic": topic, "key_contains": key_contains, "value_contains": value_contains,
                 "header": header, "partitions": partitions, "start": start, "end": end, "limit": limit}

    def work():
        name, _, contains = header.partition("=")
        scan_filter = ScanFilter(key_contains=key_contains, value_contains=value_contains, header_name=name,
                                 header_contains=contains)
        check_filter(scan_filter)
        return _scan(cluster, topic, _spec(topic, partitions, start, end, newest_first, limit, scan_filter))
    return await _tool("search_records", arguments, work, cluster=cluster)


StrategyName = Literal[tuple([*STRATEGIES, "revert"])]
STRATEGY_HELP = ("the reset: to-earliest, to-latest, to-current, to-offset (value: an offset), shift-by (value: a "
                 "delta), to-datetime (value: 2026-11-29T01:55:00.000Z), by-duration (value: PT1H), from-group "
                 "(value: a group id), revert (value: the audit event of an earlier reset)")


def _reset_input(cluster: str, group: str, strategy: str, value: str | None, topics: list[str], all_topics: bool):
    kind = kind_for(cluster, group)
    if strategy == "revert":
        try:
            seq = int(value or "")
        except ValueError as exc:
            raise ConsoleError("A revert names the audit event of the reset to undo.") from exc
        event, planned, scope = resets.revert_strategy(seq, kind)
        if event.target != f"group:{group}":
            raise ConsoleError(f"Audit event #{event.seq} reset {event.target}, not group:{group}.")
        return kind, scope, planned, seq
    scope = scope_from(all_topics or not topics, topics)
    return kind, scope, strategy_from(cluster, strategy, value), None


@server.tool(annotations=READ, structured_output=False)
async def preview_reset(cluster: Cluster_, group: Group,
                        strategy: Annotated[StrategyName, Field(description=STRATEGY_HELP)],
                        value: str | None = None,
                        topics: Annotated[list[str], Field(description="TOPIC or TOPIC:P,P; none: every topic "
                                                                       "the group committed on")] = [],  # noqa: B006
                        all_topics: bool = False) -> str:
    """What an offset reset would do, as kafka-consumer-groups --reset-offsets --dry-run computes it: per partition
    the committed offset, the target, and how many records would be skipped or read again; whether it may run
    now (the group must have no members); and the fingerprint execute_reset needs. Changes nothing."""
    arguments = {"cluster": cluster, "group": group, "strategy": strategy, "value": value, "topics": topics,
                 "all_topics": all_topics}

    def work():
        kind, scope, planned, _ = _reset_input(cluster, group, strategy, value, topics, all_topics)
        return reset_preview_json(reset_preview(cluster, group, scope, planned, kind=kind), kind=kind)
    return await _tool("preview_reset", arguments, work, cluster=cluster)


@server.tool(annotations=EXECUTE, structured_output=False)
async def execute_reset(cluster: Cluster_, group: Group,
                        strategy: Annotated[StrategyName, Field(description=STRATEGY_HELP)],
                        fingerprint: Annotated[str, Field(description="preview_reset's fingerprint")],
                        reason: Annotated[str, Field(min_length=1, description="why, for the audit log")],
                        value: str | None = None, topics: list[str] = [],  # noqa: B006
                        all_topics: bool = False) -> str:
    """Executes exactly the reset preview_reset showed: refused unless this token allows executing and its user
    is an operator; refused (nothing changed) if the group has members or its offsets moved since the preview.
    Answers the offsets read back from Kafka."""
    arguments = {"cluster": cluster, "group": group, "strategy": strategy, "value": value, "topics": topics,
                 "all_topics": all_topics, "fingerprint": fingerprint, "reason": reason}

    def work():
        kind, scope, planned, revert_of = _reset_input(cluster, group, strategy, value, topics, all_topics)
        after = resets.group_offsets_reset(actor=_call().actor, cluster=cluster, group=group, scope=scope,
                                           strategy=planned, reason=reason, confirm=group,
                                           expected_fingerprint=fingerprint, revert_of=revert_of, kind=kind)
        return reset_after_json(after)
    return await _tool("execute_reset", arguments, work, cluster=cluster, role=Role.OPERATOR, execute=True)


@server.tool(annotations=READ, structured_output=False)
async def preview_replay(cluster: Cluster_, topic: str,
                         start: Annotated[str, Field(description="earliest | offsets:P=O,... | timestamp:ISO | "
                                                                 "group:G | reset:AUDIT_EVENT_ID")],
                         end: Annotated[str, Field(description="latest | offsets:P=O,... | timestamp:ISO")] = "latest",
                         partitions: list[int] | None = None,
                         isolation: Literal["read_committed", "read_uncommitted"] = "read_committed") -> str:
    """A replay's range resolved to offsets now, per partition, and the records it would replay (reset:ID: the
    records an earlier reset skipped). Changes nothing."""
    arguments = {"cluster": cluster, "topic": topic, "start": start, "end": end, "partitions": partitions,
                 "isolation": isolation}
    return await _tool("preview_replay", arguments,
                       lambda: replay_range_json(topic, resolve_range(cluster, topic, partitions, start, end,
                                                                      isolation=isolation)), cluster=cluster)


@server.tool(annotations=EXECUTE, structured_output=False)
async def execute_replay(cluster: Cluster_, topic: str, start: str,
                         sink: Annotated[Literal["jsonl", "parquet", "topic"], Field(description="files, or a topic")],
                         reason: Annotated[str, Field(min_length=1, description="why, for the audit log")],
                         end: str = "latest", sink_topic: str = "", partitions: list[int] | None = None,
                         isolation: Literal["read_committed", "read_uncommitted"] = "read_committed") -> str:
    """Submits the replay preview_replay showed, into files or a topic of this cluster: refused unless this token
    allows executing and its user is an operator. Answers the job (follow it on the console's replays page)."""
    arguments = {"cluster": cluster, "topic": topic, "start": start, "end": end, "sink": sink,
                 "sink_topic": sink_topic, "partitions": partitions, "isolation": isolation, "reason": reason}

    def work():
        job = replay_submit(actor=_call().actor, cluster=cluster, topic=topic, partitions=partitions, start=start,
                            end=end, sink=sink, sink_topic=sink_topic, isolation=isolation, reason=reason)
        return replay_json(job)
    return await _tool("execute_replay", arguments, work, cluster=cluster, role=Role.OPERATOR, execute=True)
