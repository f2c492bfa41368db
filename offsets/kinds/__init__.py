"""Which kind of group a name is on a cluster: a consumer group (classic or consumer protocol), a share group or a
streams group. Pages, resets and the shell follow the tool of that kind (kafka-consumer-groups, kafka-share-groups,
kafka-streams-groups) through the `GroupKind` that `kind_for` picks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from console.clusters.selectors import cluster_admin
from gateway.kafka.errors import ClusterUnavailable, GroupNotFound, KafkaGatewayError
from offsets.kinds.base import GroupKind
from offsets.kinds.consumer import CONSUMER
from offsets.kinds.share import SHARE
from offsets.kinds.streams import STREAMS

if TYPE_CHECKING:
    from gateway.kafka.types import GroupDescription
    from offsets.selectors import GroupDetail

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
    return _typed_kind(admin, group)


def _typed_kind(admin, group: str) -> GroupKind:
    for listing in admin.list_groups_of_every_type():
        if listing.group_id == group and listing.group_type in _TYPED:
            return _TYPED[listing.group_type]
    return CONSUMER


def consumer_detail_or_kind(cluster: str, group: str) -> tuple[GroupKind, GroupDetail | None]:
    """(CONSUMER, its page's detail) for a consumer group, else (the group's kind, None). The detail is asked
    straight away (its describe and offsets side by side) and the typed listing only when that fails, which saves
    a consumer group's page, the common one, the round trip kind_for's own describe costs."""
    try:
        detail = CONSUMER.detail(cluster, group)
    except ClusterUnavailable:
        raise
    except KafkaGatewayError:  # GroupNotFound too: a share group has no consumer-group description or commits
        kind = _typed_kind(cluster_admin(cluster), group)
        if kind is CONSUMER:
            raise  # no other type knows it: the consumer-group answer is the one to show
        return kind, None
    if detail.description.state != "Dead":
        return CONSUMER, detail
    # "Dead" with commits: a streams group's offsets look like that to the consumer-group calls (as in kind_for).
    kind = _typed_kind(cluster_admin(cluster), group)
    return kind, detail if kind is CONSUMER else None


def consumer_description_or_kind(cluster: str, group: str) -> tuple[GroupKind, GroupDescription | None]:
    """(CONSUMER, its description) from one DescribeGroups for a live consumer group, the tabs of its page that show
    no offsets; anything else (a Dead group, another kind, a name no one knows) goes consumer_detail_or_kind's way."""
    try:
        description = cluster_admin(cluster).describe_groups([group])[group]
    except ClusterUnavailable:
        raise
    except KafkaGatewayError:
        description = None
    if description is not None and description.state != "Dead":
        return CONSUMER, description
    kind, detail = consumer_detail_or_kind(cluster, group)
    return kind, detail.description if detail is not None else None


def kind_of_reset(action: str) -> GroupKind | None:
    """The kind whose reset an audit event's action records, if any."""
    return next((kind for kind in KINDS if kind.reset_action == action), None)


__all__ = ["CONSUMER", "KIND_NAMED", "KINDS", "SHARE", "STREAMS", "GroupKind", "consumer_description_or_kind",
           "consumer_detail_or_kind", "kind_for", "kind_of_reset"]
