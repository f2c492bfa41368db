"""Changes to a connector's offsets (KIP-875) with the guarantees of a group reset: refused (and the refusal
audited) unless the connector is STOPPED and its offsets are still those the preview showed; the audit keeps every
partition's offset before and after; a revert writes an audited "before" back exactly (deleting what had no
offset). Callers check the role (operator) first. On a protected cluster (changes/guard.py) they run only as an
approved change request (changes/actions/connectors.py)."""

from __future__ import annotations

from collections.abc import Sequence

from changes.guard import change_guard
from connect.connector_offsets.preview import (
    OffsetsPreview, offsets_fingerprint, reset_offsets_preview, written_offsets_preview,
)
from connect.registration import connect_client, connect_cluster_get
from console.audit.actor import Actor
from console.audit.guarded import MSG_REASON, change_checked, guarded_change, refuse_if  # noqa: F401 - MSG_REASON: tests
from console.audit.models import AuditEvent
from console.errors import ConsoleError, NotFound
from gateway.kafka_connect.types import OffsetEntry

ALTER, RESET = "connector.offsets.alter", "connector.offsets.reset"
MSG_NOT_STOPPED = ("Connector {name} is {state}: Connect changes offsets only of a STOPPED connector. Stop it first "
                   "(its tasks shut down; resume it afterwards).")
MSG_MOVED = ("The offsets of connector {name} changed since the preview; look at the new preview and execute "
             "again.")
MSG_NOTHING = "The preview changes no offset: nothing to do."
MSG_CONFIRM = "Type the connector's name '{name}' exactly to confirm."
MSG_NOT_OFFSETS_EVENT = "Audit event #{seq} is not a change of a connector's offsets."
MSG_NO_BEFORE = "Audit event #{seq} recorded no offsets before the change: there is nothing to go back to."
MSG_NO_EVENT = "There is no audit event #{seq}."


def _entries_json(entries: Sequence[OffsetEntry]) -> list[dict]:
    return [entry.as_rest() for entry in entries]


def _check(actor: Actor, action: str, cluster: str, preview: OffsetsPreview, params: dict, reason: str,
           confirm: str, expected_fingerprint: str | None) -> None:
    change_checked(confirm=confirm, name=preview.connector, what="connector", reason=reason,
                   message=MSG_CONFIRM.format(name=preview.connector))
    target = f"connector:{preview.connect}/{preview.connector}"
    change_guard(actor=actor, action=action, cluster=cluster, target=target, reason=reason, params=params)
    refusal = None
    if not preview.allowed:
        refusal = MSG_NOT_STOPPED.format(name=preview.connector, state=preview.state or "not known")
    elif expected_fingerprint is not None and expected_fingerprint != preview.fingerprint:
        refusal = MSG_MOVED.format(name=preview.connector)
    refuse_if(refusal or "", actor=actor, action=action, cluster=cluster, target=target, reason=reason,
              params=params)


def connector_offsets_alter(*, actor: Actor, cluster: str, preview: OffsetsPreview, reason: str, confirm: str,
                            expected_fingerprint: str | None = None, revert_of: int | None = None) -> list[dict]:
    """PATCH /connectors/{name}/offsets with the preview's changed partitions, re-read and re-checked now. Returns
    those partitions' offsets read back from Connect."""
    writes = preview.writes
    params = {"connect": preview.connect, "connector": preview.connector, "type": preview.type,
              "strategy": preview.strategy, "writes": _entries_json(writes), "revert_of": revert_of}
    _check(actor, ALTER, cluster, preview, params, reason, confirm, expected_fingerprint)
    if not writes:
        raise ConsoleError(MSG_NOTHING)
    before = [{"partition": row.partition, "offset": row.before} for row in preview.rows if row.changes]
    client = connect_client(connect_cluster_get(cluster, preview.connect))
    with guarded_change(actor=actor, action=ALTER, cluster=cluster,
                        target=f"connector:{preview.connect}/{preview.connector}", reason=reason, params=params,
                        before=before) as record:
        record.details["message"] = client.alter_offsets(preview.connector, writes)
        now = {entry.key: entry.offset for entry in client.offsets(preview.connector).entries}
        record.after = [{"partition": w.partition, "offset": now.get(w.key)} for w in writes]
    return record.after


def connector_offsets_reset(*, actor: Actor, cluster: str, connect: str, name: str, reason: str, confirm: str,
                            expected_fingerprint: str | None = None) -> list[dict]:
    """DELETE /connectors/{name}/offsets; the audit keeps every partition's offset before, so a revert can write
    them all back."""
    preview = reset_offsets_preview(cluster, connect, name)
    params = {"connect": connect, "connector": name, "type": preview.type, "strategy": "reset"}
    _check(actor, RESET, cluster, preview, params, reason, confirm, expected_fingerprint)
    before = [{"partition": row.partition, "offset": row.before} for row in preview.rows]
    client = connect_client(connect_cluster_get(cluster, connect))
    with guarded_change(actor=actor, action=RESET, cluster=cluster, target=f"connector:{connect}/{name}",
                        reason=reason, params=params, before=before) as record:
        record.details["message"] = client.reset_offsets(name)
        record.after = _entries_json(client.offsets(name).entries)
    return record.after


def offsets_event(seq: int) -> AuditEvent:
    event = AuditEvent.objects.filter(seq=seq).first()
    if event is None:
        raise NotFound(MSG_NO_EVENT.format(seq=seq))
    if event.action not in (ALTER, RESET) or not isinstance(event.params, dict) or "connector" not in event.params:
        raise ConsoleError(MSG_NOT_OFFSETS_EVENT.format(seq=seq))
    if not event.before:
        raise ConsoleError(MSG_NO_BEFORE.format(seq=seq))
    return event


def revert_preview(seq: int) -> tuple[AuditEvent, OffsetsPreview]:
    """The preview of writing back exactly what audit event `seq` recorded before its change: each partition's
    offset, and a deletion where it had none."""
    event = offsets_event(seq)
    writes = [OffsetEntry(dict(item["partition"]), item["offset"]) for item in event.before]
    preview = written_offsets_preview(event.cluster, event.params["connect"], event.params["connector"], writes,
                                      strategy=f"revert of audit event #{seq}")
    return event, preview


def connector_offsets_revert(*, actor: Actor, seq: int, reason: str, confirm: str,
                             expected_fingerprint: str | None = None) -> list[dict]:
    event, preview = revert_preview(seq)
    return connector_offsets_alter(actor=actor, cluster=event.cluster, preview=preview, reason=reason,
                                   confirm=confirm, expected_fingerprint=expected_fingerprint, revert_of=seq)


__all__ = ["ALTER", "RESET", "connector_offsets_alter", "connector_offsets_reset", "connector_offsets_revert",
           "offsets_event", "offsets_fingerprint", "revert_preview"]
