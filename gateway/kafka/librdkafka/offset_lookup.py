"""Log start, log end and last stable offsets of many partitions, looked up by a consumer's offsets_for_times.

AdminClient.list_offsets builds a Python future and a result object for every partition, holding the GIL. In the
cluster's client process, which every web and Celery process of the host shares, a lag sweep's or the topic
table's ListOffsets of tens of thousands of partitions then held up each other request: in bench/offset_lookup.py
a four-partition call made while 8,000 partitions were looked up waited about 10 ms for the GIL at every hand-over.
offsets_for_times sends the same requests (one ListOffsets per leader; the isolation level is the consumer's, so
read_committed answers the last stable offset) inside one C call that lets go of the GIL. The consumers never
subscribe, join a group or commit: librdkafka only wants a group id to make one.

What it cannot do the Admin client still does: timestamps (their record's timestamp is not returned here), and
any partition that failed here, whose own outcome the Admin client tells.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from confluent_kafka import KafkaError, KafkaException, TopicPartition

from gateway.kafka.librdkafka.client import lookup_consumer
from gateway.kafka.types import ClusterConnection, PartitionRef

# librdkafka finds partitions in its lists one by one, so a call's cost grows with the square of its size
# (8,000 partitions took ten times as long as 2,000); windows keep each call near linear. Log ends and last stable
# offsets of 8,000 partitions on one broker: windows of 2,000 took 290 ms of CPU, of 500 about 125 ms, of 250 no
# less, of 100 more time for little less CPU.
LOOKUP_WINDOW = 500
# Below this many partitions the Admin client's own call is as cheap, and tells every partition's outcome.
LOOKUP_MIN_PARTITIONS = 1000
EARLIEST_TS, LATEST_TS = -2, -1
DRAIN_EVENTS = 1000
# Whole-call errors that mean a leader (or the cluster) did not answer in time: one such window makes the call
# give up on lookups, since every later window may hold that leader's partitions too.
_NOT_ANSWERING = frozenset({KafkaError._TIMED_OUT, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN})
# The share of the caller's bound a lookup window may take: what is left lets the Admin client's ListOffsets, which
# tells the partitions a silent leader holds from the others, answer within about the same bound.
LOOKUP_SHARE_OF_TIMEOUT = 0.5


@dataclass
class Lookup:
    found: dict[PartitionRef, int] = field(default_factory=dict)
    # Partitions that failed, alone or with their window (a leader moving, say, or not answering): the caller asks
    # the Admin client, which tells each one's own outcome.
    unanswered: list[PartitionRef] = field(default_factory=list)


def look_up(connection: ClusterConnection, refs: list[PartitionRef], *, earliest: bool, committed: bool,
            timeout: float) -> Lookup:
    """The log start of each partition when `earliest`, else its log end, or its last stable offset when
    `committed`. Stops at the first window that timed out, leaving it and the rest unanswered."""
    consumer = lookup_consumer(connection, "read_committed" if committed else "read_uncommitted")
    stamp = EARLIEST_TS if earliest else LATEST_TS
    lookup = Lookup()
    for start in range(0, len(refs), LOOKUP_WINDOW):
        window = refs[start:start + LOOKUP_WINDOW]
        try:
            answered = consumer.offsets_for_times([TopicPartition(r.topic, r.partition, stamp) for r in window],
                                                  timeout=timeout * LOOKUP_SHARE_OF_TIMEOUT)
        except KafkaException as exc:
            if exc.args[0].code() in _NOT_ANSWERING:
                lookup.unanswered += refs[start:]
                return lookup
            lookup.unanswered += window
            continue
        finally:
            # Errors and logs librdkafka queued for this consumer wait for a poll that nothing else makes.
            consumer.consume(DRAIN_EVENTS, 0)
        for tp in answered:
            if tp.error is None:
                lookup.found[PartitionRef(tp.topic, tp.partition)] = tp.offset
            else:
                # The consumer answers from its metadata cache, which may not know a topic created since it
                # was filled, or still know one deleted since: the Admin client looks the leaders up afresh.
                lookup.unanswered.append(PartitionRef(tp.topic, tp.partition))
    return lookup
