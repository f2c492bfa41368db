"""DescribeConfigs and IncrementalAlterConfigs for topics and brokers."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from gateway.kafka.errors import MSG_TOPIC_NOT_FOUND, TopicNotFound
from gateway.kafka.librdkafka.base import BATCH_OBJECTS, AdminBase
from gateway.kafka.types import BROKER, TOPIC, ConfigEntryInfo, ConfigSynonym, ItemFailure

# Kafka's DescribeConfigs sources by number; confluent-kafka hands them over as plain ints and its enum lacks 6 and 7.
SOURCE_NAMES = {
    0: "unknown",
    1: "topic",
    2: "dynamic-broker",
    3: "dynamic-default-broker",
    4: "static-broker",
    5: "default",
    6: "broker-logger",
    7: "client-metrics",
    8: "group",
}
_RESOURCE_TYPES = {TOPIC: ResourceType.TOPIC, BROKER: ResourceType.BROKER}


def _source_name(source) -> str:
    return SOURCE_NAMES.get(int(getattr(source, "value", source)), "unknown")


def _entry(entry) -> ConfigEntryInfo:
    synonyms = tuple(
        ConfigSynonym(name=s.name, value=s.value, source=_source_name(s.source)) for s in (entry.synonyms or {}).values()
    )
    return ConfigEntryInfo(
        name=entry.name, value=entry.value, source=_source_name(entry.source), is_default=bool(entry.is_default),
        read_only=bool(entry.is_read_only), sensitive=bool(entry.is_sensitive), synonyms=synonyms,
    )


class ConfigOps(AdminBase):
    def describe_configs(self, kind: str, names: list[str], *, skip_missing: bool = False
                         ) -> dict[str, dict[str, ConfigEntryInfo]]:
        """DescribeConfigs (with synonyms) for many topics in one round, or for brokers one resource each. With
        skip_missing, a topic deleted since its name was read is left out instead of failing the round: a list
        built from a snapshot names topics that other clients may delete at any moment."""

        def run(admin: AdminClient) -> dict[str, dict[str, ConfigEntryInfo]]:
            if not names:
                return {}
            resources = [ConfigResource(_RESOURCE_TYPES[kind], name) for name in names]
            if kind == BROKER:
                # librdkafka accepts at most one broker resource per request.
                futures = {}
                for resource in resources:
                    futures.update(admin.describe_configs([resource], request_timeout=self.timeout))
            else:
                futures = admin.describe_configs(resources, request_timeout=self.timeout)
            outcomes = self._wait_each({resource.name: f for resource, f in futures.items()})
            for name, outcome in list(outcomes.items()):
                if isinstance(outcome, TopicNotFound) and skip_missing:
                    del outcomes[name]
                elif isinstance(outcome, TopicNotFound):
                    raise TopicNotFound(MSG_TOPIC_NOT_FOUND.format(topic=name, cluster=self.cluster),
                                        code=outcome.code, cluster=self.cluster)
                elif isinstance(outcome, Exception):
                    raise outcome
            return {name: {key: _entry(e) for key, e in entries.items()} for name, entries in outcomes.items()}

        return self._call(run)

    def alter_configs(self, kind: str, name: str, *, set_values: dict[str, str], delete: list[str],
                      validate_only: bool = False) -> None:
        """IncrementalAlterConfigs: sets and removes only the keys given, leaving every other override alone."""

        def run(admin: AdminClient) -> None:
            entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in set_values.items()]
            entries += [ConfigEntry(k, None, incremental_operation=AlterConfigOpType.DELETE) for k in delete]
            resource = ConfigResource(_RESOURCE_TYPES[kind], name, incremental_configs=entries)
            futures = admin.incremental_alter_configs([resource], validate_only=validate_only,
                                                      request_timeout=self.timeout)
            for future in futures.values():
                self._wait(future)

        self._call(run)

    def alter_topic_configs_many(self, names: list[str], *, set_values: dict[str, str], delete: list[str],
                                 validate_only: bool = False) -> dict[str, ItemFailure]:
        """IncrementalAlterConfigs of the same keys on many topics, BATCH_OBJECTS topics per request; returns the
        topics Kafka refused (each with the broker's own message)."""

        def run(admin: AdminClient) -> dict[str, ItemFailure]:
            entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in set_values.items()]
            entries += [ConfigEntry(k, None, incremental_operation=AlterConfigOpType.DELETE) for k in delete]
            outcomes = {}
            for start in range(0, len(names), BATCH_OBJECTS):
                resources = [ConfigResource(ResourceType.TOPIC, name, incremental_configs=entries)
                             for name in names[start:start + BATCH_OBJECTS]]
                futures = admin.incremental_alter_configs(resources, validate_only=validate_only,
                                                          request_timeout=self.timeout)
                outcomes.update(self._wait_each({resource.name: f for resource, f in futures.items()}))
            return self._item_failures(outcomes)

        return self._call(run)
