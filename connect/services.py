"""Changes to connectors: create (after Connect's own validation), edit as a diff, pause, resume, stop, restart and
delete, one at a time or for every connector a filter selects. Each is audited with before and after (secrets
masked); callers check the role first (operator; delete: admin)."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass

from django.utils import timezone

from connect.destinations import destination_changes
from connect.guards import connector_guard, plugin_facts
from connect.masking import MASK, has_reference, kept_secrets, mask_config, scrub_text, unmask
from connect.models import ConnectorEvent
from connect.registration import connect_client, connect_cluster_get
from connect.selectors import declared_secrets
from console.accounts.roles import Role, user_role
from console.audit.actor import Actor
from console.audit.guarded import MSG_REASON, change_checked, guarded_change
from console.audit.services import audit_refusal, audited
from gateway.kafka_connect.errors import ConnectError, ConnectNotFound
from gateway.kafka_connect.types import ConfigValidation
from console.errors import Conflict, ConsoleError

ACTIONS = ("pause", "resume", "stop", "restart")
MSG_NAME = ("A connector's name cannot be empty, start or end with a space, or hold a control character (Connect "
            "refuses or trims those), nor hold '%', '/' or '\\': Connect would create it, but its REST server (Jetty) "
            "refuses every path that carries one, so it could never be read, stopped or deleted again.")
UNADDRESSABLE = ("%", "/", "\\")
MSG_CONFIG_INVALID = "Connect refused the configuration ({count} problem(s)); nothing was created or changed: {detail}"
MSG_CONFIG_MOVED = ("The configuration of {name} changed since the diff was shown; look at the new diff and apply "
                    "again.")
MSG_NO_CHANGE = "The new configuration is the same as the running one: nothing to apply."
MSG_CONFIRM = "Type the connector's name '{name}' exactly to confirm."
MSG_ACTION = "The action is one of " + ", ".join(ACTIONS) + "."
MSG_PARTIAL_MASK = (f"{{keys}}: the value still holds {MASK} but is not the secret as it was shown: give the whole "
                    f"value again, secret included.")
MSG_SECRET_AGAIN = ("This edit changes where the connector connects ({moved}) and keeps secrets it does not give "
                    "({kept}): the worker would send them to the new destination. Give them again in this edit.")
WAIT_FOR_STATE_S = 8.0


class ConfigInvalid(ConsoleError):
    """Connect's validation found problems; `validation` has them per setting (each message passed through
    `scrub`, which takes secrets out of them)."""

    def __init__(self, validation: ConfigValidation, scrub=lambda text: text) -> None:
        errors = {key: tuple(scrub(m) for m in messages) for key, messages in validation.errors.items()}
        detail = "; ".join(f"{key}: {' '.join(messages)}" for key, messages in errors.items())
        super().__init__(MSG_CONFIG_INVALID.format(count=validation.error_count, detail=detail))
        self.validation, self.errors = validation, errors


def _target(connect: str, name: str) -> str:
    return f"connector:{connect}/{name}"


def _note(cluster: str, connect: str, name: str, state: str, actor: Actor, trace: str = "") -> None:
    ConnectorEvent.objects.create(cluster=cluster, connect=connect, connector=name, state=state, actor=actor.name,
                                  trace=trace, at=timezone.now())


def config_fingerprint(config: dict) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def _check_name(name: str) -> None:
    if (not name or name != name.strip() or any(ch in name for ch in UNADDRESSABLE)
            or any(ord(ch) < 32 or ord(ch) == 127 for ch in name)):
        raise ConsoleError(MSG_NAME)


def connector_validate(*, cluster: str, connect: str, plugin: str, config: dict[str, str]) -> ConfigValidation:
    """Connect's verdict on a configuration (PUT /connector-plugins/{plugin}/config/validate); changes nothing."""
    client = connect_client(connect_cluster_get(cluster, connect))
    return client.validate(plugin, {**config, "connector.class": plugin})


def connector_create(*, actor: Actor, cluster: str, connect: str, name: str, config: dict[str, str],
                     reason: str = "") -> dict:
    """The rules of connect/guards.py first (an audited refusal, nothing sent to Connect), then Connect's own
    validation (ConfigInvalid, nothing created, when it finds problems), then POST /connectors. Returns the
    connector as Connect stored it, secrets masked."""
    _check_name(name)
    registration = connect_cluster_get(cluster, connect)
    client = connect_client(registration)
    plugin = config.get("connector.class", "")
    facts = plugin_facts(client, plugin)
    connector_guard(actor=actor, action="connector.create", registration=registration, client=client, name=name,
                    facts=facts, config=config, changed=frozenset(config), target=_target(connect, name),
                    reason=reason)
    validation = client.validate(plugin, {**config, "name": name})
    if validation.error_count:
        raise ConfigInvalid(validation)
    secrets = validation.secret_keys | facts.secrets
    params = {"connect": connect, "connector": name, "config": mask_config(config, secrets)}
    with audited(actor=actor, action="connector.create", cluster=cluster, target=_target(connect, name),
                 reason=reason, params=params) as record:
        info = client.create(name, config)
        record.after = {"config": mask_config(info.config, secrets), "type": info.type,
                        **wait_for_state(client, name, {"RUNNING", "FAILED"})}
    _note(cluster, connect, name, "CREATED", actor)
    return record.after


@dataclass(frozen=True)
class ConfigChange:
    key: str
    before: str | None  # None: added
    after: str | None  # None: removed
    secret: bool

    @property
    def kind(self) -> str:
        return "added" if self.before is None else "removed" if self.after is None else "changed"


@dataclass(frozen=True)
class ConfigDiff:
    changes: tuple[ConfigChange, ...]
    fingerprint: str  # of the running configuration the diff was made against


def config_diff(current: dict[str, str], new: dict[str, str], secrets: frozenset[str]) -> list[ConfigChange]:
    """What changes, setting by setting; secret values masked (a changed secret shows as the mask on both sides)."""
    shown_before, shown_after = mask_config(current, secrets), mask_config(new, secrets)
    changes = []
    for key in sorted(set(current) | set(new)):
        if current.get(key) == new.get(key):
            continue
        changes.append(ConfigChange(key, shown_before.get(key), shown_after.get(key),
                                    secret=shown_before.get(key) == MASK or shown_after.get(key) == MASK))
    return changes


def connector_edit_preview(*, cluster: str, connect: str, name: str, config: dict[str, str]) -> ConfigDiff:
    client = connect_client(connect_cluster_get(cluster, connect))
    current = client.connector(name).config
    secrets = declared_secrets(client, current.get("connector.class", ""))
    new = unmask(config, current, secrets)
    return ConfigDiff(tuple(config_diff(current, new, secrets)), config_fingerprint(current))


def _edit_problem(current: dict[str, str], submitted: dict[str, str], new: dict[str, str], secrets: frozenset[str],
                  *, admin: bool) -> str:
    """Why an edit must give a secret again, or "": a value that still holds the mask without being the masked
    running value, or a kept secret (or, below admin, a kept config provider reference) while a destination
    changes, which would send that secret to wherever the new destination points."""
    partial = sorted(key for key, value in new.items() if MASK in value and value != current.get(key))
    if partial:
        return MSG_PARTIAL_MASK.format(keys=", ".join(partial))
    moved = destination_changes(current, new)
    if not moved:
        return ""
    kept = set(kept_secrets(submitted, current, secrets))
    if not admin:
        kept |= {key for key, value in new.items() if value == current.get(key) and has_reference(value)}
    if not kept:
        return ""
    return MSG_SECRET_AGAIN.format(kept=", ".join(sorted(kept)), moved=", ".join(moved))


def connector_edit(*, actor: Actor, cluster: str, connect: str, name: str, config: dict[str, str], reason: str,
                   expected_fingerprint: str | None = None) -> dict:
    """PUT /connectors/{name}/config with the whole new configuration, after the rules of connect/guards.py and
    Connect's validation, and only if the running configuration is still the one the diff was made against. A
    secret left as it was shown (masked) keeps its value, unless a destination (an address, host or bootstrap
    setting) changes: then the secret must be given again. Audited with both configurations, masked."""
    registration = connect_cluster_get(cluster, connect)
    client = connect_client(registration)
    current = client.connector(name).config
    running = plugin_facts(client, current.get("connector.class", ""))
    new = unmask(config, current, running.secrets)
    new.setdefault("connector.class", current.get("connector.class", ""))
    facts = running if new["connector.class"] == running.plugin else plugin_facts(client, new["connector.class"])
    secrets = running.secrets | facts.secrets
    target, params = _target(connect, name), {"connect": connect, "connector": name}
    if expected_fingerprint is not None and expected_fingerprint != config_fingerprint(current):
        message = MSG_CONFIG_MOVED.format(name=name)
        audit_refusal(actor=actor, action="connector.config.edit", cluster=cluster, target=target, reason=reason,
                      params=params, error=message)
        raise Conflict(message)
    if new == current:
        raise ConsoleError(MSG_NO_CHANGE)
    problem = _edit_problem(current, config, new, running.secrets, admin=user_role(actor.user) == Role.ADMIN)
    if problem:
        audit_refusal(actor=actor, action="connector.config.edit", cluster=cluster, target=target, reason=reason,
                      params={**params, "config": mask_config(new, secrets)}, error=problem)
        raise ConsoleError(problem)
    changed = frozenset(key for key in set(current) | set(new) if current.get(key) != new.get(key))
    connector_guard(actor=actor, action="connector.config.edit", registration=registration, client=client,
                    name=name, facts=facts, config=new, changed=changed, target=target, reason=reason)
    validation = client.validate(new["connector.class"], {**new, "name": name})
    if validation.error_count:
        # Connect's messages quote values, and the running secrets are in this configuration.
        raise ConfigInvalid(validation, scrub=lambda text: scrub_text(text, {**current, **new}, secrets))
    secrets |= validation.secret_keys
    with audited(actor=actor, action="connector.config.edit", cluster=cluster, target=target, reason=reason,
                 params=params, before=mask_config(current, secrets)) as record:
        info = client.put_config(name, new)
        record.after = mask_config(info.config, secrets)
    _note(cluster, connect, name, "CONFIG", actor)
    return record.after


def _state_json(client, name: str) -> dict:
    status = client.status(name)
    return {"state": status.state, "tasks": {str(t.id): t.state for t in status.tasks}}


def wait_for_state(client, name: str, wanted: set[str], timeout: float = WAIT_FOR_STATE_S) -> dict:
    """Connect acknowledges pause, resume and stop before the workers act; the status read back is polled until
    it shows `wanted` (bounded: what it shows then is what the audit records)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            state = _state_json(client, name)
        except ConnectNotFound:  # a connector just created has no status until a worker starts it
            state = {"state": "", "tasks": {}}
        tasks = state["tasks"].values()
        settled = state["state"] in wanted and all(t in wanted or t == "FAILED" for t in tasks) and (
            state["state"] != "RUNNING" or tasks)
        if settled or time.monotonic() >= deadline:
            return state
        time.sleep(0.25)


_EXPECTED = {"pause": {"PAUSED"}, "resume": {"RUNNING"}, "stop": {"STOPPED"}, "restart": {"RUNNING", "FAILED"}}


def connector_action(*, actor: Actor, cluster: str, connect: str, name: str, action: str, reason: str = "",
                     include_tasks: bool = False, only_failed: bool = False, task: int | None = None) -> dict:
    """pause, resume, stop (KIP-875: tasks shut down, offsets may then change) or restart (the connector, with
    include_tasks its tasks, with only_failed only the failed ones; or one task). Audited with the state before
    and the state read back after."""
    if action not in ACTIONS:
        raise ConsoleError(MSG_ACTION)
    client = connect_client(connect_cluster_get(cluster, connect))
    before = _state_json(client, name)
    params = {"connect": connect, "connector": name}
    if action == "restart":
        params.update(include_tasks=include_tasks, only_failed=only_failed, task=task)
    with audited(actor=actor, action=f"connector.{action}", cluster=cluster, target=_target(connect, name),
                 reason=reason, params=params, before=before) as record:
        if action == "restart" and task is not None:
            client.restart_task(name, task)
        elif action == "restart":
            client.restart(name, include_tasks=include_tasks, only_failed=only_failed)
        else:
            getattr(client, action)(name)
        record.after = wait_for_state(client, name, _EXPECTED[action])
    _note(cluster, connect, name, action.upper(), actor)
    return record.after


def connector_delete(*, actor: Actor, cluster: str, connect: str, name: str, confirm: str, reason: str) -> None:
    """DELETE /connectors/{name}; its configuration (masked) stays in the audit, its offsets stay in Kafka."""
    change_checked(confirm=confirm, name=name, what="connector", reason=reason, message=MSG_CONFIRM.format(name=name))
    client = connect_client(connect_cluster_get(cluster, connect))
    info = client.connector(name)
    secrets = declared_secrets(client, info.plugin)
    with guarded_change(actor=actor, action="connector.delete", cluster=cluster, target=_target(connect, name),
                        reason=reason, params={"connect": connect, "connector": name},
                        before={"config": mask_config(info.config, secrets), "type": info.type}) as record:
        client.delete(name)
        record.after = None
    _note(cluster, connect, name, "DELETED", actor)


@dataclass(frozen=True)
class BulkOutcome:
    connect: str
    name: str
    state: str  # read back after, or the state before when it failed
    error: str = ""


def connectors_bulk(*, actor: Actor, cluster: str, action: str, chosen: list[tuple[str, str]],
                    reason: str) -> list[BulkOutcome]:
    """The same action on each chosen connector, each audited on its own; one that fails does not stop the
    others, and its error is reported beside it."""
    if action not in ACTIONS:
        raise ConsoleError(MSG_ACTION)
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    outcomes = []
    for connect, name in chosen:
        try:
            after = connector_action(actor=actor, cluster=cluster, connect=connect, name=name, action=action,
                                     reason=reason, include_tasks=action == "restart")
            outcomes.append(BulkOutcome(connect, name, after["state"]))
        except (ConnectError, ConsoleError) as exc:
            outcomes.append(BulkOutcome(connect, name, "", exc.message))
    return outcomes
