"""Every group of a cluster, of every type, in one listing.

Kafka's own ListGroups (the Java Admin client's, with no type filter) names classic, consumer, share and streams
groups with their type and state in one round over the brokers. librdkafka's lists only the consumer-protocol types,
so the console used to ask both and merge them; at 50,000 groups each listing is seconds of the client process's
time, and the lag sweep and the groups list each did it every interval. Now one listing serves both, and
librdkafka's is the fallback for when the Java client cannot answer (the consumer groups are still shown).
"""

from __future__ import annotations

from gateway.kafka.errors import ClusterUnavailable, KafkaGatewayError
from gateway.kafka.types import GroupListing

OTHER_TYPES = ("share", "streams")
MSG_ONLY_CONSUMER_GROUPS = "Share and streams groups could not be listed: {error}"


def groups_of_every_type_of(admin) -> tuple[list[GroupListing], str]:
    """(listings sorted by id, and "" or why only the consumer groups are there) from the cluster's gateway."""
    # A cluster that is down, silent or refusing the console's credentials fails here within the request bound
    # (one small DescribeCluster through librdkafka) instead of first starting the Java client's JVM for it.
    admin.describe_cluster()
    try:
        return admin.list_groups_of_every_type(), ""
    except ClusterUnavailable:
        raise
    except KafkaGatewayError as exc:
        return admin.list_groups(), MSG_ONLY_CONSUMER_GROUPS.format(error=exc.message)
