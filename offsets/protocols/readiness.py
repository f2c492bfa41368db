"""Whether a group still on the classic rebalance protocol can move to the consumer protocol (KIP-848), and why
(pure). The facts below are Kafka 4.3.1's, read from its jars:

- The broker converts a non-empty classic group when a member using the consumer protocol joins it (an online
  upgrade) only if `group.consumer.migration.policy` is `bidirectional` (the default) or `upgrade`; with
  `downgrade` or `disabled` it refuses the joining member. Empty groups convert either way, whatever the policy.
  With `disabled`, the classic-protocol members of a group that is already a consumer group are refused when
  they next rejoin.
- The conversion rebuilds each member's assignment from the classic one, and refuses a group whose assignment
  carries user data "from a custom assignor" (it would be lost): the joining member's heartbeat is answered
  GROUP_ID_NOT_FOUND (tests/offsets/protocols/test_custom_assignor_real.py). The consumer protocol assigns on the
  broker (`group.consumer.assignors`, uniform and range by default). Kafka's own client-side assignors are range,
  roundrobin, sticky and cooperative-sticky.
- Static members (group.instance.id) exist in both protocols.
The client versions that speak the consumer protocol are not in the jars; they are the projects' release notes'
(Kafka's Java client: generally available in 4.0; librdkafka: 2.12.0) and are only as good as those.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gateway.kafka.types import ProtocolGroupDescription

READY, CHECK, BLOCKED = "ready", "check", "blocked"
_RANK = {READY: 0, CHECK: 1, BLOCKED: 2}
BUILT_IN_ASSIGNORS = frozenset({"range", "roundrobin", "sticky", "cooperative-sticky"})
UPGRADE_POLICIES = frozenset({"bidirectional", "upgrade"})
POLICIES = ("bidirectional", "upgrade", "downgrade", "disabled")
# Client software (as it names itself in ApiVersions) -> the first version with the consumer protocol generally
# available, and how its version is read from what it reports.
JAVA_CLIENT = "apache-kafka-java"
FIRST_CONSUMER_PROTOCOL = {"java": (4, 0, 0), "librdkafka": (2, 12, 0)}
_RDKAFKA_IN_VERSION = re.compile(r"rdkafka-(\d+)\.(\d+)\.(\d+)")
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?")

MSG_EMPTY = ("No members: the group becomes a consumer group when its first consumer-protocol member joins, "
             "whatever the migration policy.")
MSG_POLICY_BLOCKS = ("The brokers' group.consumer.migration.policy is '{policy}': a consumer-protocol member joining "
                     "this non-empty group is refused. Set it to 'upgrade' or 'bidirectional', or stop every member "
                     "and start them on the consumer protocol (an empty group converts whatever the policy).")
MSG_POLICY_OK = "The brokers' group.consumer.migration.policy is '{policy}': an online upgrade is allowed."
MSG_POLICY_UNKNOWN = "The brokers' group.consumer.migration.policy could not be read{why}."
MSG_POLICY_REJOIN = ("The policy is 'disabled': the remaining classic-protocol members are refused when they next "
                     "rejoin; move them to the consumer protocol.")
MSG_CUSTOM_ASSIGNOR = ("Client-side assignor '{assignor}' is not one of Kafka's (range, roundrobin, sticky, "
                       "cooperative-sticky). The consumer protocol assigns on the broker, and the broker refuses to "
                       "convert a group whose assignments carry a custom assignor's user data: a member joining on "
                       "the consumer protocol is told the group id does not exist (fatal for librdkafka clients). "
                       "Switch to a built-in assignor first.")
MSG_ASSIGNOR_OK = "Client-side assignor '{assignor}' is one of Kafka's own; the broker's assignor takes over."
MSG_STATIC = ("{static} of {members} members are static (group.instance.id): restart each with the same instance id, "
              "one at a time, and expect its partitions to wait for it as they do today.")
MSG_MIXED = ("{classic} of {members} members still use the classic protocol in this consumer group: restart them "
             "with group.protocol=consumer.")
MSG_OLD_CLIENTS = ("Clients too old for the consumer protocol are connected to the cluster: {clients}. Kafka counts "
                   "client software per broker connection, not per member, so whether they are this group's is not "
                   "known.")
MSG_CLIENTS_UNKNOWN = "Client versions are not known{why}."
MSG_CLIENTS_UNJUDGED = ("Connected to the cluster, and not judged here (neither Kafka's Java client nor librdkafka, or "
                        "a client that did not name itself): {clients}.")
MSG_CLIENTS_OK = "Every client software version connected to the cluster supports the consumer protocol."


@dataclass(frozen=True)
class Reason:
    level: str  # ready (a fact in favour), check (needs a look) or blocked
    text: str


@dataclass(frozen=True)
class Verdict:
    level: str
    reasons: tuple[Reason, ...]

    @property
    def label(self) -> str:
        return {READY: "ready", CHECK: "ready after checks", BLOCKED: "blocked"}[self.level]


def consumer_protocol_from(software: str, version: str) -> tuple[int, int, int] | None:
    """The first version of `software` with the consumer protocol, and the version `version` is, compared as
    (major, minor, patch); None when the software is not one whose versions are known here."""
    if software == JAVA_CLIENT:
        return FIRST_CONSUMER_PROTOCOL["java"]
    if "rdkafka" in software or _RDKAFKA_IN_VERSION.search(version or ""):
        return FIRST_CONSUMER_PROTOCOL["librdkafka"]
    return None


def parsed_version(software: str, version: str) -> tuple[int, int, int] | None:
    """librdkafka's wrappers report their own version with librdkafka's after it ("2.16.1-rdkafka-2.16.0"): the
    protocol is librdkafka's, so that one counts."""
    found = _RDKAFKA_IN_VERSION.search(version or "")
    if found:
        return int(found[1]), int(found[2]), int(found[3])
    found = _VERSION.match(version or "")
    if found:
        return int(found[1]), int(found[2]), int(found[3] or 0)
    return None


def too_old(software: str, version: str) -> bool | None:
    """Whether this client software is older than its consumer protocol; None when that cannot be told."""
    needed = consumer_protocol_from(software, version)
    have = parsed_version(software, version)
    if needed is None or have is None:
        return None
    return have < needed


def verdict(group: ProtocolGroupDescription, *, policy: str | None, policy_error: str = "",
            clients: list[tuple[str, str]] | None, clients_note: str = "") -> Verdict:
    """`group` is a classic group, or a consumer group some of whose members are still classic. `policy` is the
    brokers' group.consumer.migration.policy (None when not read: `policy_error` says why); `clients` the
    (software, version) pairs connected to the cluster (None when not known: `clients_note` says why)."""
    reasons: list[Reason] = []
    members = group.members
    if group.group_type == "consumer":
        classic = len(group.classic_members)
        reasons.append(Reason(CHECK, MSG_MIXED.format(classic=classic, members=len(members))))
        if policy == "disabled":
            reasons.append(Reason(BLOCKED, MSG_POLICY_REJOIN))
    elif not members:
        reasons.append(Reason(READY, MSG_EMPTY))
    elif policy is None:
        reasons.append(Reason(CHECK, MSG_POLICY_UNKNOWN.format(why=f": {policy_error}" if policy_error else "")))
    elif policy in UPGRADE_POLICIES:
        reasons.append(Reason(READY, MSG_POLICY_OK.format(policy=policy)))
    else:
        reasons.append(Reason(BLOCKED, MSG_POLICY_BLOCKS.format(policy=policy)))
    if group.group_type == "classic" and group.assignor:
        if group.assignor in BUILT_IN_ASSIGNORS:
            reasons.append(Reason(READY, MSG_ASSIGNOR_OK.format(assignor=group.assignor)))
        else:
            reasons.append(Reason(BLOCKED, MSG_CUSTOM_ASSIGNOR.format(assignor=group.assignor)))
    static = [m for m in members if m.instance_id]
    if static:
        reasons.append(Reason(CHECK, MSG_STATIC.format(static=len(static), members=len(members))))
    if clients is None:
        reasons.append(Reason(CHECK, MSG_CLIENTS_UNKNOWN.format(why=f": {clients_note}" if clients_note else "")))
    else:
        judged = {(name, version): too_old(name, version) for name, version in clients}
        old = sorted(f"{name} {version}" for (name, version), is_old in judged.items() if is_old)
        unjudged = sorted(f"{name} {version}" for (name, version), is_old in judged.items() if is_old is None)
        if old:
            reasons.append(Reason(CHECK, MSG_OLD_CLIENTS.format(clients=", ".join(old))))
        if unjudged:
            reasons.append(Reason(CHECK, MSG_CLIENTS_UNJUDGED.format(clients=", ".join(unjudged))))
        if not old and not unjudged:
            reasons.append(Reason(READY, MSG_CLIENTS_OK))
    level = max((r.level for r in reasons), key=_RANK.__getitem__, default=READY)
    return Verdict(level, tuple(reasons))
