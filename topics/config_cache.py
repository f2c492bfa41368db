"""The three configs the topic list shows (cleanup.policy, retention.ms, retention.bytes), kept in Redis for
TOPIC_LIST_CONFIGS_S per topic and shared by every web process.

The list's page of 50 topics used to cost one DescribeConfigs per load. On a big, busy cluster that round trip
was most of the page's time, for values that change a few times a year, while everything else on the list is a
snapshot already. A value changed through the console is forgotten at once (topics/services.py); one changed by
another client shows within TOPIC_LIST_CONFIGS_S; the topic's own page always asks Kafka.

Each topic is a Redis key of its own, so it expires by itself (Redis 7.0 has no expiry per hash field). Without
Redis, every page asks Kafka as before.
"""

from __future__ import annotations

import json
import logging

import redis
from django.conf import settings

from console.shared_table_stores import redis_client, redis_failed

log = logging.getLogger(__name__)

Configs = tuple[str | None, str | None, str | None]  # cleanup.policy, retention.ms, retention.bytes
KEYS = ("cleanup.policy", "retention.ms", "retention.bytes")


def _key(cluster: str, topic: str) -> str:
    return f"console:topic-configs:{len(cluster)}:{cluster}:{topic}"


def _client() -> redis.Redis | None:
    return redis_client(settings.REDIS_URL)


def read(cluster: str, topics: list[str]) -> dict[str, Configs]:
    """The topics' configs still within their time; the others (and all of them while Redis is down) are absent."""
    client = _client()
    if client is None or not topics:
        return {}
    try:
        values = client.mget([_key(cluster, t) for t in topics])
    except redis.RedisError as exc:
        redis_failed(exc)
        return {}
    found = {}
    for topic, value in zip(topics, values):
        if value is not None:
            try:
                cleanup, retention_ms, retention_bytes = json.loads(value)
            except (ValueError, TypeError):  # written by another layout: asked again
                continue
            found[topic] = (cleanup, retention_ms, retention_bytes)
    return found


def write(cluster: str, configs: dict[str, Configs]) -> None:
    client = _client()
    if client is None or not configs:
        return
    seconds = max(1, round(settings.TOPIC_LIST_CONFIGS_S))
    try:
        pipe = client.pipeline(transaction=False)
        for topic, values in configs.items():
            pipe.set(_key(cluster, topic), json.dumps(list(values), separators=(",", ":")), ex=seconds)
        pipe.execute()
    except redis.RedisError as exc:
        redis_failed(exc)


def forget(cluster: str, topics: list[str]) -> None:
    """After the console changed these topics' configs (or created or deleted them): the next list asks Kafka."""
    client = _client()
    if client is None or not topics:
        return
    try:
        client.delete(*[_key(cluster, t) for t in topics])
    except redis.RedisError as exc:
        # Not fatal to the change already made; the list may show the old value until the entry expires.
        log.warning("The topic list's configs of %s could not be forgotten: %s", cluster, exc)
        redis_failed(exc)
