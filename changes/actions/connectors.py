"""The connector changes a request can hold: a change of a connector's offsets (KIP-875), written entries or a
reset. A request keeps the entries the preview resolved (a sink strategy's targets included), so the approver runs
exactly what was shown; its fingerprint is that of all the connector's offsets, as the service checks it.

A connector belongs to the Kafka cluster its Connect cluster is registered beside; no pattern list names
connectors, so any protection of that cluster covers them (changes/guard.py)."""

from __future__ import annotations

from changes.registry import ChangeAction, Plan
from connect.connector_offsets import services as offsets
from connect.connector_offsets.preview import OffsetsPreview, reset_offsets_preview, written_offsets_preview
from console.accounts.roles import Role
from console.errors import Conflict, ConsoleError
from gateway.kafka_connect.types import OffsetEntry

ALTER, RESET = offsets.ALTER, offsets.RESET


def alter_kwargs(preview: OffsetsPreview, *, revert_of: int | None = None) -> dict:
    """What a request keeps of an alteration: the partitions it writes, as resolved by the preview."""
    return {"connect": preview.connect, "connector": preview.connector, "strategy": preview.strategy,
            "writes": [entry.as_rest() for entry in preview.writes], "revert_of": revert_of}


def reset_kwargs(*, connect: str, connector: str) -> dict:
    return {"connect": connect, "connector": connector}


def _writes(kwargs: dict) -> list[OffsetEntry]:
    return [OffsetEntry(dict(w["partition"]), w["offset"]) for w in kwargs["writes"]]


def _plan_of(preview: OffsetsPreview, revert_of: int | None) -> Plan:
    if not preview.allowed:
        raise Conflict(offsets.MSG_NOT_STOPPED.format(name=preview.connector, state=preview.state or "not known"))
    summary = {"connect": preview.connect, "connector": preview.connector, "type": preview.type,
               "state": preview.state, "strategy": preview.strategy, "revert_of": revert_of,
               "offsets": [{"partition": r.partition, "before": r.before, "after": r.after} for r in preview.rows
                           if r.changes]}
    if not summary["offsets"]:
        raise ConsoleError(offsets.MSG_NOTHING)
    # The service's own check: every offset of the connector, not only those written (a task committing elsewhere
    # while it waits means it was not stopped for the change the requester saw).
    return Plan(summary=summary, fingerprint=preview.fingerprint)


def _alter_preview(cluster: str, kwargs: dict) -> OffsetsPreview:
    return written_offsets_preview(cluster, kwargs["connect"], kwargs["connector"], _writes(kwargs),
                                   strategy=kwargs.get("strategy") or "as written")


def _alter_plan(cluster: str, kwargs: dict) -> Plan:
    return _plan_of(_alter_preview(cluster, kwargs), kwargs.get("revert_of"))


def _alter_run(*, actor, cluster: str, kwargs: dict, reason: str, fingerprint: str):
    return offsets.connector_offsets_alter(actor=actor, cluster=cluster, preview=_alter_preview(cluster, kwargs),
                                           reason=reason, confirm=kwargs["connector"],
                                           expected_fingerprint=fingerprint, revert_of=kwargs.get("revert_of"))


def _reset_plan(cluster: str, kwargs: dict) -> Plan:
    return _plan_of(reset_offsets_preview(cluster, kwargs["connect"], kwargs["connector"]), None)


def _reset_run(*, actor, cluster: str, kwargs: dict, reason: str, fingerprint: str):
    return offsets.connector_offsets_reset(actor=actor, cluster=cluster, connect=kwargs["connect"],
                                           name=kwargs["connector"], reason=reason, confirm=kwargs["connector"],
                                           expected_fingerprint=fingerprint)


def connector_target(connect: str, connector: str) -> str:
    """As the service's audit rows name it."""
    return f"connector:{connect}/{connector}"


def _target(kwargs: dict) -> str:
    return connector_target(kwargs["connect"], kwargs["connector"])


ACTIONS = (
    ChangeAction(ALTER, "change of a connector's offsets", Role.OPERATOR, _target, _alter_plan, _alter_run),
    ChangeAction(RESET, "reset of a connector's offsets", Role.OPERATOR, _target, _reset_plan, _reset_run),
)
