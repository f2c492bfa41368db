"""Which kind of group a name is on a cluster: a consumer group (classic or consumer protocol), a share group or a
streams group. Pages, resets and the shell follow the tool of that kind (kafka-consumer-groups, kafka-share-groups,
kafka-streams-groups) through the `GroupKind` that `kind_for` picks."""

from __future__ import annotations

from console.clusters.selectors import cluster_admin
from console.kafka.errors import ClusterUnavailable, GroupNotFound, KafkaGatewayError
from offsets.kinds.base import GroupKind
from offsets.kinds.consumer import CONSUMER
from offsets.kinds.share import SHARE
from offsets.kinds.streams import STREAMS

KINDS: tuple[GroupKind, ...] = (CONSUMER, SHARE, STREAMS)
# Kinds ListGroups of every type names that the consumer-group calls do not answer for.
KIND_NAMED: dict[str, GroupKind] = {kind.name: kind for kind in KINDS}
_TYPED = {name: kind for name, kind in KIND_NAMED.items() if kind is not CONSUMER}


def kind_for(cluster: str, group: str) -> GroupKind:
    """A live or committed consumer group answers without the Java client (whose first call in a process starts a
    JVM); a name the consumer-group calls do not know is looked up in Kafka's ListGroups of every type. A name no
    list knows is a consumer group, so the consumer-group pages say it does not exist."""
    admin = cluster_admin(cluster)
    try:
        if admin.describe_groups([group])[group].state != "Dead":
            return CONSUMER
    except GroupNotFound:
        pass
    except ClusterUnavailable:
        raise  # the cluster did not answer: say so, rather than what a second client then fails with
    except KafkaGatewayError:
        # A streams or share group can make the consumer-group describe fail with "not a consumer group": the
        # typed listing below decides; if that fails too, its error is the one shown.
        pass
    for listing in admin.list_groups_of_every_type():
        if listing.group_id == group and listing.group_type in _TYPED:
            return _TYPED[listing.group_type]
    return CONSUMER


def kind_of_reset(action: str) -> GroupKind | None:
    """The kind whose reset an audit event's action records, if any."""
    return next((kind for kind in KINDS if kind.reset_action == action), None)


__all__ = ["CONSUMER", "KIND_NAMED", "KINDS", "SHARE", "STREAMS", "GroupKind", "kind_for", "kind_of_reset"]
