"""The console never writes to, purges, reconfigures, repartitions or deletes the audit witness topic.

The witness is the copy of the audit log that whoever runs the console cannot rewrite; a console that let its own
admins purge or delete it would hand them the means to hide what they did. Each writing service asks here first
(so the page and the shell refuse alike), and the refusal is audited like any other.

A cluster is the witness's by its identity, the cluster id its brokers answer with, not by the name it is
registered under: a second registration of the same brokers is the same cluster. Ids are asked only when the
topic is the witness topic's name, and when one cannot be asked the write is refused (it is one topic name).
"""

from __future__ import annotations

from typing import NoReturn

from console.audit.actor import Actor
from console.audit.services import audit_refusal
from console.witness.config import WitnessConfig, witness_config
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError, PermissionRefused
from gateway.kafka.errors import KafkaGatewayError

MSG_WITNESS_PROTECTED = ("Topic '{topic}' on cluster '{cluster}' is the audit witness: the console does not {what} "
                         "it (its records are the copy of the audit log the database cannot rewrite).")
MSG_WITNESS_UNKNOWN = ("Topic '{topic}' has the audit witness's name, and the console cannot tell whether cluster "
                       "'{cluster}' is the witness's ({detail}): it does not {what} it until it can.")


def cluster_identity(cluster: str) -> str:
    """The cluster id the brokers of the cluster registered as `cluster` answer with. Raises ConsoleError when they
    cannot be asked."""
    try:
        found = cluster_admin(cluster).describe_cluster().cluster_id
    except KafkaGatewayError as exc:
        raise ConsoleError(exc.message) from None
    if not found:
        raise ConsoleError(f"cluster '{cluster}' answered without a cluster id")
    return found


def witness_on(*, cluster: str = "", cluster_id: str = "") -> WitnessConfig | None:
    """The witness's configuration when the cluster registered as `cluster`, or the one whose id is `cluster_id`
    (a cluster known by its id only: a Connect worker's), is the witness's cluster; None when it is not. Raises
    ConsoleError when that cannot be told (a cluster that does not answer, neither given)."""
    config = witness_config()
    if config is None:
        return None
    if cluster and not cluster_id and cluster == config.cluster:
        return config
    if not cluster_id and not cluster:
        raise ConsoleError("no cluster named")
    target = cluster_id or cluster_identity(cluster)
    return config if target == cluster_identity(config.cluster) else None


def witness_refused(*, actor: Actor, action: str, cluster: str, topic: str, what: str, reason: str = "",
                    params: dict | None = None, message: str = "") -> NoReturn:
    """Audits the refusal and raises PermissionRefused (MSG_WITNESS_PROTECTED unless `message` says more)."""
    message = message or MSG_WITNESS_PROTECTED.format(topic=topic, cluster=cluster, what=what)
    audit_refusal(actor=actor, action=action, cluster=cluster, target=f"topic:{topic}", reason=reason,
                  params=params, error=message)
    raise PermissionRefused(message)


def witness_topic_guard(*, actor: Actor, action: str, cluster: str, topic: str, what: str, reason: str = "",
                        params: dict | None = None, cluster_id: str = "") -> None:
    """Raises PermissionRefused (MSG_WITNESS_PROTECTED), after an audited refusal, when `topic` on `cluster` is the
    configured witness topic; returns otherwise. `what`: the verb the message names (produce to, purge...).
    `cluster` is a registered cluster's name; `cluster_id`, when the caller knows only the id of the cluster it
    writes to, is compared instead. A cluster whose id cannot be asked is refused with MSG_WITNESS_UNKNOWN."""
    config = witness_config()
    if config is None or config.topic != topic:
        return
    try:
        if witness_on(cluster=cluster, cluster_id=cluster_id) is None:
            return
    except ConsoleError as exc:
        witness_refused(actor=actor, action=action, cluster=cluster, topic=topic, what=what, reason=reason,
                        params=params, message=MSG_WITNESS_UNKNOWN.format(topic=topic, cluster=cluster, what=what,
                                                                         detail=exc.message))
    witness_refused(actor=actor, action=action, cluster=cluster, topic=topic, what=what, reason=reason, params=params)
