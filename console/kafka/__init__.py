"""The Kafka gateway: the only package that imports confluent_kafka.

Callers build a `KafkaAdmin` for a `ClusterConnection` (see console.clusters.selectors.cluster_admin)
and get frozen dataclasses back, or one of the exceptions in console.kafka.errors.
"""
