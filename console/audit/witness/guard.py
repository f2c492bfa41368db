"""The console never writes to, purges, reconfigures, repartitions or deletes the audit witness topic.

The witness is the copy of the audit log that whoever runs the console cannot rewrite; a console that let its own
admins purge or delete it would hand them the means to hide what they did. Each writing service asks here first
(so the page and the shell refuse alike), and the refusal is audited like any other.
"""

from __future__ import annotations

from console.audit.actor import Actor
from console.audit.services import audit_refusal
from console.audit.witness.config import witness_config
from console.errors import PermissionRefused

MSG_WITNESS_PROTECTED = ("Topic '{topic}' on cluster '{cluster}' is the audit witness: the console does not {what} "
                         "it (its records are the copy of the audit log the database cannot rewrite).")


def witness_topic_guard(*, actor: Actor, action: str, cluster: str, topic: str, what: str, reason: str = "",
                        params: dict | None = None) -> None:
    """Raises PermissionRefused (MSG_WITNESS_PROTECTED), after an audited refusal, when `topic` on `cluster` is the
    configured witness topic; returns otherwise. `what`: the verb the message names (produce to, purge...)."""
    config = witness_config()
    if config is None or config.cluster != cluster or config.topic != topic:
        return
    message = MSG_WITNESS_PROTECTED.format(topic=topic, cluster=cluster, what=what)
    audit_refusal(actor=actor, action=action, cluster=cluster, target=f"topic:{topic}", reason=reason,
                  params=params, error=message)
    raise PermissionRefused(message)
