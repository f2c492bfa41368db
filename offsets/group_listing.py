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


CONFIRM_MISSING_AT_MOST = 500  # groups missing since the last list, asked about in one DescribeGroups
CONFIRMED_KINDS = ("classic", "consumer")  # what DescribeGroups answers for; share and streams groups are not asked
MSG_LISTING_LOST_GROUPS = ("ListGroups left out {count} group(s) that still exist ('{example}' among them): a broker "
                           "is shutting down or a group coordinator is moving. The last list is kept.")


def confirm_missing_gone(admin, listings: list[GroupListing], known: dict[str, str]) -> None:
    """Raises ClusterUnavailable when classic or consumer groups of the last list (`known`: group id -> kind) are
    missing from `listings` while Kafka still describes them. A broker in its controlled shutdown answers
    ListGroups with an empty list and no error for a moment, which would read as every group deleted; a group
    really deleted describes as Dead. The describe raises too when the cluster does not answer or a coordinator is
    moving, so a list taken then is not published either."""
    listed = {g.group_id for g in listings}
    missing = sorted(g for g, kind in known.items() if kind in CONFIRMED_KINDS and g not in listed)
    if not missing:
        return
    described = admin.describe_groups(missing[:CONFIRM_MISSING_AT_MOST])
    alive = sorted(g for g, d in described.items() if d.state != "Dead")
    if alive:
        raise ClusterUnavailable(MSG_LISTING_LOST_GROUPS.format(count=len(alive), example=alive[0]),
                                 cluster=admin.cluster)

