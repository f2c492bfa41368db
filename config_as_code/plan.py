"""What applying a configuration file would change: each difference between the file and the cluster as a change
to create, change or delete one thing, in the order apply makes them. Deletes (what the cluster has and the file
does not) are listed always but applied only when asked (`--delete`). What apply cannot do (fewer partitions, another
replication factor, a SCRAM user without a password to create it) is a problem, and a plan with problems is not
applied. The fingerprint covers the file, whether deletes are on and the state the plan was made from, so apply
refuses a plan whose cluster moved since. Pure: the caller reads the cluster (config_as_code/selectors.py)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from config_as_code.document import ACL_FIELDS, ClusterConfig, MaskSpec, digest, document_data

CREATE, CHANGE, DELETE = "create", "change", "delete"
MASK = "********"  # connect/masking.py: a secret as it is shown
MSG_OTHER_CLUSTER = "This file is for cluster '{file}', not '{cluster}'."
MSG_FEWER_PARTITIONS = "Kafka cannot take partitions away ({now} now, {wanted} in the file)."
MSG_REPLICATION = ("The replication factor changes by reassignment (manage.py replication reassign), not here "
                   "({now} now, {wanted} in the file).")
MSG_NO_PASSWORD = "A new SCRAM credential needs its password: give password_env (a CONSOLE_SECRET_ variable)."
MSG_UNKNOWN_CONNECT = "No Connect cluster '{connect}' is registered beside this cluster."
MSG_MASKED_NEW = ("{keys}: a new connector cannot keep a masked secret (********); give a config provider "
                  "reference such as ${{file:/path:key}}.")
MSG_RESERVED_TOPIC = "The audit witness topic is the console's own: it is not managed by configuration files."


@dataclass(frozen=True)
class Change:
    section: str
    action: str  # create, change or delete
    key: str  # the thing: a topic's name, a binding, "connect/connector", ...
    before: Any = None
    after: Any = None
    problem: str = ""  # why apply cannot make this change (then it applies nothing)
    skipped: bool = False  # a delete while deletes are off: shown, not applied

    def as_json(self) -> dict:
        return {"section": self.section, "action": self.action, "key": self.key, "before": self.before,
                "after": self.after, "problem": self.problem or None, "skipped": self.skipped}


@dataclass(frozen=True)
class Plan:
    cluster: str
    changes: tuple[Change, ...]
    fingerprint: str
    allow_deletes: bool
    file_digest: str
    sections: tuple[str, ...]
    problems: tuple[str, ...] = field(default=())

    @property
    def applicable(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if not c.skipped)

    def counts(self) -> dict[str, int]:
        counts = {CREATE: 0, CHANGE: 0, DELETE: 0, "skipped": 0}
        for change in self.changes:
            counts["skipped" if change.skipped else change.action] += 1
        return counts

    def as_json(self) -> dict:
        return {"cluster": self.cluster, "fingerprint": self.fingerprint, "allow_deletes": self.allow_deletes,
                "file_digest": self.file_digest, "sections": list(self.sections), "counts": self.counts(),
                "problems": list(self.problems), "changes": [c.as_json() for c in self.changes]}


def _delete(section: str, key: str, before, allow_deletes: bool) -> Change:
    return Change(section, DELETE, key, before=before, skipped=not allow_deletes)


def _topics(desired, current, allow_deletes: bool, reserved: str) -> list[Change]:
    changes = []
    for name, want in sorted(desired.items()):
        have = current.get(name)
        if name == reserved:
            changes.append(Change("topics", CHANGE, name, after=want.__dict__, problem=MSG_RESERVED_TOPIC))
            continue
        if have is None:
            changes.append(Change("topics", CREATE, name, after={"partitions": want.partitions,
                                                                "replication_factor": want.replication_factor,
                                                                "configs": want.configs}))
            continue
        before, after, problem = {}, {}, ""
        if want.partitions != have.partitions:
            before["partitions"], after["partitions"] = have.partitions, want.partitions
            if want.partitions < have.partitions:
                problem = MSG_FEWER_PARTITIONS.format(now=have.partitions, wanted=want.partitions)
        if want.replication_factor != have.replication_factor:
            before["replication_factor"], after["replication_factor"] = have.replication_factor, want.replication_factor
            problem = problem or MSG_REPLICATION.format(now=have.replication_factor, wanted=want.replication_factor)
        config_before = {k: v for k, v in have.configs.items() if want.configs.get(k) != v}
        config_after = {k: v for k, v in want.configs.items() if have.configs.get(k) != v}
        if config_before or config_after:
            before["configs"] = {k: have.configs.get(k) for k in sorted(set(config_before) | set(config_after))}
            after["configs"] = {k: want.configs.get(k) for k in sorted(set(config_before) | set(config_after))}
        if before or after:
            changes.append(Change("topics", CHANGE, name, before=before, after=after, problem=problem))
    changes += [_delete("topics", name, {"partitions": have.partitions}, allow_deletes)
                for name, have in sorted(current.items()) if name not in desired]
    return changes


def _binding(values: tuple[str, ...]) -> dict:
    return dict(zip(ACL_FIELDS, values, strict=True))


def _key_of(values: tuple[str, ...]) -> str:
    b = _binding(values)
    return (f"{b['principal']} {b['permission']} {b['operation']} on {b['resource_type']}:{b['resource_name']} "
            f"({b['pattern_type']}, host {b['host']})")


def _acls(desired, current, allow_deletes: bool) -> list[Change]:
    changes = [Change("acls", CREATE, _key_of(b), after=_binding(b)) for b in sorted(desired - current)]
    changes += [_delete("acls", _key_of(b), _binding(b), allow_deletes) for b in sorted(current - desired)]
    return changes


def _quotas(desired, current, allow_deletes: bool) -> list[Change]:
    changes = []
    for key, want in sorted(desired.items()):
        have = current.get(key)
        if have is None:
            changes.append(Change("quotas", CREATE, key, after=want.values))
        elif have.values != want.values:
            changes.append(Change("quotas", CHANGE, key, before=have.values, after=want.values))
    changes += [_delete("quotas", key, have.values, allow_deletes)
                for key, have in sorted(current.items()) if key not in desired]
    return changes


def _scram(desired, current, allow_deletes: bool) -> list[Change]:
    changes = []
    for name, want in sorted(desired.items()):
        have = current.get(name)
        added = sorted(set(want.mechanisms) - set(have.mechanisms if have else ()))
        removed = sorted(set(have.mechanisms) - set(want.mechanisms)) if have else []
        if added:
            changes.append(Change("scram_users", CREATE if have is None else CHANGE, name,
                                  before=list(have.mechanisms) if have else None,
                                  after={"mechanisms": list(want.mechanisms), "add": added,
                                         "password_env": want.password_env},
                                  problem="" if want.password_env else MSG_NO_PASSWORD))
        if removed:
            changes.append(_delete("scram_users", f"{name} {','.join(removed)}", {"user": name, "mechanisms": removed},
                                   allow_deletes))
    changes += [_delete("scram_users", f"{name} {','.join(have.mechanisms)}",
                        {"user": name, "mechanisms": list(have.mechanisms)}, allow_deletes)
                for name, have in sorted(current.items()) if name not in desired]
    return changes


def _policies(desired, current, allow_deletes: bool) -> list[Change]:
    changes = []
    for name, want in sorted(desired.items()):
        have = current.get(name)
        if have is None:
            changes.append(Change("topic_policies", CREATE, name, after=want))
        elif have != want:
            changes.append(Change("topic_policies", CHANGE, name, before=have, after=want))
    changes += [_delete("topic_policies", name, have, allow_deletes)
                for name, have in sorted(current.items()) if name not in desired]
    return changes


def _mask_key(rule: MaskSpec) -> str:
    return f"{rule.topic_pattern} {rule.selector} {rule.target} {rule.action} for {','.join(rule.roles)}".strip()


def _masking(desired, current, allow_deletes: bool) -> list[Change]:
    # A rule is its fields: a rule changed is one deleted and one created (rules have no name to carry).
    changes = [Change("masking_rules", CREATE, _mask_key(r), after=r.as_dict()) for r in desired if r not in current]
    changes += [_delete("masking_rules", _mask_key(r), {**r.as_dict(), "id": r.id}, allow_deletes)
                for r in current if r not in desired]
    return changes


def _connectors(desired, current, allow_deletes: bool) -> list[Change]:
    changes = []
    for connect, connectors in sorted(desired.items()):
        have_all = current.get(connect)
        for name, want in sorted(connectors.items()):
            key = f"{connect}/{name}"
            if have_all is None:
                changes.append(Change("connectors", CREATE, key, after=want,
                                      problem=MSG_UNKNOWN_CONNECT.format(connect=connect)))
                continue
            have = have_all.get(name)
            if have is None:
                masked = sorted(k for k, v in want.items() if MASK in v)
                changes.append(Change("connectors", CREATE, key, after=want,
                                      problem=MSG_MASKED_NEW.format(keys=", ".join(masked)) if masked else ""))
            elif have != want:
                keys = sorted(k for k in set(have) | set(want) if have.get(k) != want.get(k))
                changes.append(Change("connectors", CHANGE, key, before={k: have.get(k) for k in keys},
                                      after={k: want.get(k) for k in keys}))
    for connect, connectors in sorted(current.items()):
        if connect not in desired:
            continue  # a Connect cluster the file does not name is not managed by it
        changes += [_delete("connectors", f"{connect}/{name}", {"connector.class": have.get("connector.class")},
                            allow_deletes)
                    for name, have in sorted(connectors.items()) if name not in desired[connect]]
    return changes


def _fingerprint(text_digest: str, allow_deletes: bool, current: ClusterConfig) -> str:
    state = document_data(current)
    if current.masking_rules is not None:
        state["masking_rule_ids"] = sorted(r.id or 0 for r in current.masking_rules)
    payload = json.dumps({"file": text_digest, "deletes": allow_deletes, "state": state}, sort_keys=True,
                         default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def config_plan(desired: ClusterConfig, current: ClusterConfig, *, text: str, cluster: str, allow_deletes: bool,
                reserved_topic: str = "") -> Plan:
    """`current` must hold (at least) the sections `desired` names; the others are not compared."""
    problems = []
    if desired.cluster is not None and desired.cluster != cluster:
        problems.append(MSG_OTHER_CLUSTER.format(file=desired.cluster, cluster=cluster))
    changes: list[Change] = []
    if desired.topics is not None:
        changes += _topics(desired.topics, current.topics or {}, allow_deletes, reserved_topic)
    if desired.acls is not None:
        changes += _acls(desired.acls, current.acls or frozenset(), allow_deletes)
    if desired.quotas is not None:
        changes += _quotas(desired.quotas, current.quotas or {}, allow_deletes)
    if desired.scram_users is not None:
        changes += _scram(desired.scram_users, current.scram_users or {}, allow_deletes)
    if desired.topic_policies is not None:
        changes += _policies(desired.topic_policies, current.topic_policies or {}, allow_deletes)
    if desired.masking_rules is not None:
        changes += _masking(desired.masking_rules, current.masking_rules or (), allow_deletes)
    if desired.connectors is not None:
        changes += _connectors(desired.connectors, current.connectors or {}, allow_deletes)
    problems += [f"{c.section} {c.key}: {c.problem}" for c in changes if c.problem]
    text_digest = digest(text)
    return Plan(cluster=cluster, changes=tuple(changes), allow_deletes=allow_deletes, file_digest=text_digest,
                fingerprint=_fingerprint(text_digest, allow_deletes, current.only(desired.sections)),
                sections=desired.sections, problems=tuple(problems))
