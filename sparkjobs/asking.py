"""A replay into a protected topic, asked for instead of submitted: the page, the shell and the API make the change
request here, after the checks the submit would make for the person asking (a reason, masking, the witness topic,
a destination that exists), so a person whose role masks the source cannot have someone else copy it unmasked."""

from __future__ import annotations

from changes.actions import replays as replay_changes
from changes.guard import is_protected
from changes.models import ChangeRequest
from changes.proposals import propose_if_protected
from console.audit.actor import Actor
from console.audit.guarded import reason_checked
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from console.witness.guard import witness_topic_guard
from sparkjobs.filters import filter_check
from sparkjobs.models import ReplayJob
from sparkjobs.services import MSG_SAME_TOPIC, replay_mask_check


def replay_proposal(*, actor: Actor, cluster: str, topic: str, partitions: list[int] | None, start: str, end: str,
                    sink: str, sink_topic: str = "", sink_cluster: str = "", keep_partitions: bool = False,
                    filter_expr: str = "", isolation: str = ReplayJob.Isolation.READ_COMMITTED, reason: str
                    ) -> ChangeRequest | None:
    """The request made for this replay when it writes to a protected topic; None when the caller submits it."""
    destination = sink_cluster or cluster
    if sink != ReplayJob.Sink.TOPIC or not sink_topic or not is_protected(destination, f"topic:{sink_topic}"):
        return None
    reason_checked(reason)
    if sink_topic == topic and destination == cluster:
        raise ConsoleError(MSG_SAME_TOPIC)
    replay_mask_check(actor, cluster, topic, sink, filter_expr, reason)
    witness_topic_guard(actor=actor, action="replay.run", cluster=destination, topic=sink_topic,
                        what="replay into", reason=reason, params={"sink": sink, "source": f"{cluster}/{topic}"})
    cluster_admin(destination).describe_topics([sink_topic])
    kwargs = replay_changes.replay_kwargs(cluster=cluster, topic=topic, partitions=partitions, start=start, end=end,
                                          sink_topic=sink_topic, sink_cluster=sink_cluster,
                                          keep_partitions=keep_partitions, filter_expr=filter_check(filter_expr),
                                          isolation=isolation)
    return propose_if_protected(actor=actor, action=replay_changes.REPLAY, cluster=destination, kwargs=kwargs,
                                reason=reason)
