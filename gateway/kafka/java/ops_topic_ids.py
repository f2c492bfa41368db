"""Topic ids of every topic, through Kafka's Java Admin client: librdkafka's Metadata answer carries them, but its
list_topics does not hand them over, and its DescribeTopics answers with one future per topic."""

from __future__ import annotations

import base64
import re
import uuid

from gateway.kafka.java import bridge

# The whole listing crosses the bridge as one text, not one py4j round trip per topic: a topic name holds only
# [a-zA-Z0-9._-] and an id is 22 characters of URL-safe base64, so "(name=..., topicId=..., ...)" parses
# without ambiguity.
_LISTING = re.compile(r"\(name=([A-Za-z0-9._-]+), topicId=([A-Za-z0-9_-]{22}),")


def parse_topic_listings(text: str) -> dict[str, str]:
    """Pure: {topic name: topic id} from the Java listings' text, ids in the canonical form the rest of the
    console uses (ops_topics._canonical_uuid)."""
    return {m[1]: str(uuid.UUID(bytes=base64.urlsafe_b64decode(m[2] + "=="))) for m in _LISTING.finditer(text)}


class TopicIdOps(bridge.JavaCalls):
    def topic_ids(self) -> dict[str, str]:
        """{name: topic id} of every topic, internal ones included (one Metadata request)."""
        found = self._java(lambda admin, jvm: admin.listTopics(
            jvm.org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(True)).listings())
        return parse_topic_listings(str(found.toString()))
