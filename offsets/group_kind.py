"""Which kind of group a name is on a cluster: a consumer group (classic or consumer protocol), a share group or a
streams group. Pages, resets and the shell follow the tool of that kind (kafka-consumer-groups, kafka-share-groups,
kafka-streams-groups)."""

from __future__ import annotations

from console.clusters.selectors import cluster_admin
from console.kafka.errors import ClusterUnavailable, GroupNotFound, KafkaGatewayError

CONSUMER, SHARE, STREAMS = "consumer", "share", "streams"


def group_kind(cluster: str, group: str) -> str:
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
        if listing.group_id == group and listing.group_type in (SHARE, STREAMS):
            return listing.group_type
    return CONSUMER
