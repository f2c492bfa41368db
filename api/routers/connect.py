"""Kafka Connect beside a cluster (`manage.py connect`): connectors as Connect's REST API answers for them (secrets
masked), their actions, and their offsets (KIP-875) changed after a preview whose fingerprint the change gives
back."""

from __future__ import annotations

import json
from typing import Literal

from ninja import Router, Schema, Status
from pydantic import Field

from api.access import allow
from api.schemas import PROBLEMS, REASON
from changes.serializers import change_json
from connect import registration, services
from connect.connector_offsets import services as offsets
from connect.connector_offsets.asking import offsets_change_proposal
from connect.connector_offsets.preview import reset_offsets_preview, sink_offsets_preview, written_offsets_preview
from connect.connector_offsets.source_input import parse_source_offsets
from connect.shell_output import connect_clusters_json, masked_entries, masked_info, offsets_preview_json
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.errors import ConsoleError
from offsets.resets.strategy_input import scope_from, strategy_from

router = Router(tags=["connect"])
SINK_STRATEGIES = ("to-earliest", "to-latest", "to-offset", "shift-by", "to-datetime", "by-duration")
MSG_ONE_CHANGE = "Say one change: reset, revert, source_offsets, or a strategy (for a sink connector)."
MSG_REVERT_TARGET = "Audit event #{seq} changed {target}, not connector:{connect}/{name}."


def _client(cluster: str, connect: str):
    return registration.connect_client(registration.connect_cluster_get(cluster, connect))


@router.get("/clusters/{cluster}/connect", response={200: list[dict], **PROBLEMS},
            summary="List Connect clusters")
def connect_list(request, cluster: str):
    """`manage.py connect clusters --format json`."""
    allow(request, cluster=cluster)
    return connect_clusters_json(registration.connect_clusters(cluster))


@router.get("/clusters/{cluster}/connect/{connect}/connectors", response={200: dict, **PROBLEMS},
            summary="List connectors")
def connector_list(request, cluster: str, connect: str):
    """`manage.py connect list --format json`: GET /connectors?expand=info&expand=status, secrets masked."""
    allow(request, cluster=cluster)
    client = _client(cluster, connect)
    return masked_entries(client, client.connectors_rest())


@router.get("/clusters/{cluster}/connect/{connect}/connectors/{kafka_name:name}", response={200: dict, **PROBLEMS},
            summary="Describe a connector")
def connector_describe(request, cluster: str, connect: str, name: str):
    """`manage.py connect describe --format json`: its configuration (secrets masked) and its status."""
    allow(request, cluster=cluster)
    client = _client(cluster, connect)
    return {"info": masked_info(client, client.connector(name).rest), "status": client.status(name).rest}


@router.get("/clusters/{cluster}/connect/{connect}/connectors/{kafka_name:name}/offsets",
            response={200: dict, **PROBLEMS}, summary="A connector's offsets")
def connector_offsets(request, cluster: str, connect: str, name: str):
    """`manage.py connect offsets NAME --format json`: GET /connectors/{name}/offsets."""
    allow(request, cluster=cluster)
    return _client(cluster, connect).offsets(name).rest


class OffsetsChange(Schema):
    reset: bool = Field(False, description="forget every offset (DELETE .../offsets)")
    revert: int | None = Field(None, description="write back the 'before' of this audit event's change")
    source_offsets: dict | list | None = Field(None, description="offsets as GET .../offsets answers them")
    strategy: Literal[SINK_STRATEGIES] | None = Field(None, description="a sink connector's reset strategy")
    value: str | None = Field(None, description="the strategy's argument")
    topics: list[str] = Field(default_factory=list, description="TOPIC[:P,P] (default: every topic)")


class OffsetsExecute(OffsetsChange):
    fingerprint: str = Field(min_length=1, description="the preview's: refused if the offsets moved since")
    reason: str = REASON


def _preview(cluster: str, connect: str, name: str, body: OffsetsChange):
    chosen = [body.reset, body.revert is not None, body.source_offsets is not None, body.strategy is not None]
    if sum(chosen) != 1:
        raise ConsoleError(MSG_ONE_CHANGE)
    if body.reset:
        return reset_offsets_preview(cluster, connect, name)
    if body.revert is not None:
        event, preview = offsets.revert_preview(body.revert)
        if (event.cluster, event.params.get("connect"), event.params.get("connector")) != (cluster, connect, name):
            raise ConsoleError(MSG_REVERT_TARGET.format(seq=event.seq, target=event.target, connect=connect,
                                                        name=name))
        return preview
    if body.source_offsets is not None:
        try:
            writes = parse_source_offsets(json.dumps(body.source_offsets))
        except ValueError as exc:
            raise ConsoleError(str(exc), field="source_offsets") from exc
        return written_offsets_preview(cluster, connect, name, writes)
    scope = scope_from(not body.topics, body.topics)
    return sink_offsets_preview(cluster, connect, name, scope, strategy_from(cluster, body.strategy, body.value))


@router.post("/clusters/{cluster}/connect/{connect}/connectors/{kafka_name:name}/offsets/preview",
             response={200: dict, **PROBLEMS}, summary="Preview a change of a connector's offsets")
def connector_offsets_preview(request, cluster: str, connect: str, name: str, body: OffsetsChange):
    """`manage.py connect offsets NAME <change> --format json` without --yes."""
    allow(request, cluster=cluster)
    return offsets_preview_json(_preview(cluster, connect, name, body))


@router.post("/clusters/{cluster}/connect/{connect}/connectors/{kafka_name:name}/offsets",
             response={200: dict, 202: dict, **PROBLEMS}, summary="Change a connector's offsets")
def connector_offsets_change(request, cluster: str, connect: str, name: str, body: OffsetsExecute):
    """`manage.py connect offsets NAME <change> --yes --if-unchanged FINGERPRINT --format json` (operator): the
    connector must be STOPPED; refused (409, audited) if its offsets moved since the preview. Answers the offsets
    read back. On a protected cluster: 202 and the change request made instead."""
    allow(request, role=Role.OPERATOR, cluster=cluster, write=True)
    actor = Actor.from_request(request)
    change = offsets_change_proposal(actor=actor, cluster=cluster, preview=_preview(cluster, connect, name, body),
                                     reset=body.reset, reason=body.reason, confirm=name,
                                     expected_fingerprint=body.fingerprint, revert_of=body.revert)
    if change is not None:
        return Status(202, change_json(change))
    if body.reset:
        offsets.connector_offsets_reset(actor=actor, cluster=cluster, connect=connect, name=name, reason=body.reason,
                                        confirm=name, expected_fingerprint=body.fingerprint)
    elif body.revert is not None:
        _preview(cluster, connect, name, body)  # the event must be this connector's
        offsets.connector_offsets_revert(actor=actor, seq=body.revert, reason=body.reason, confirm=name,
                                         expected_fingerprint=body.fingerprint)
    else:
        offsets.connector_offsets_alter(actor=actor, cluster=cluster, preview=_preview(cluster, connect, name, body),
                                        reason=body.reason, confirm=name, expected_fingerprint=body.fingerprint)
    return _client(cluster, connect).offsets(name).rest


# Last: its {action} would otherwise take .../offsets for itself (Django tries addresses in order).
class Action(Schema):
    include_tasks: bool = False
    only_failed: bool = False
    task: int | None = None
    reason: str = ""


@router.post("/clusters/{cluster}/connect/{connect}/connectors/{kafka_name:name}/{action}",
             response={200: dict, **PROBLEMS}, summary="Pause, resume, stop or restart a connector")
def connector_action(request, cluster: str, connect: str, name: str, action: Literal[services.ACTIONS],
                     body: Action):
    """`manage.py connect ACTION NAME --yes --format json` (operator): the status read back after."""
    allow(request, role=Role.OPERATOR, cluster=cluster, write=True)
    services.connector_action(actor=Actor.from_request(request), cluster=cluster, connect=connect, name=name,
                              action=action, reason=body.reason, include_tasks=body.include_tasks,
                              only_failed=body.only_failed, task=body.task)
    return _client(cluster, connect).status(name).rest
