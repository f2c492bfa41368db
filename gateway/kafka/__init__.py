"""The Kafka gateway: the only package that imports confluent_kafka or py4j.

Callers build a `KafkaAdmin` (gateway.kafka.admin) or its twin `IsolatedKafkaAdmin` (gateway.kafka.isolated) for a
`ClusterConnection` (see console.clusters.selectors.cluster_admin) and get frozen values (gateway.kafka.types) back,
or one of the exceptions in gateway.kafka.errors. Below that face, by transport and concern, each layer importing
only those under it:

    types, errors     the shared vocabulary
    librdkafka/       operations over confluent-kafka's AdminClient, its cached clients and error mapping
    java/             operations over Kafka's Java Admin client (a JVM through py4j) and its command-line tools
    registry          the schema registry's codecs
    records/          reading, scanning, producing and appending records (librdkafka consumers and producers)
    admin             KafkaAdmin: every operation, whichever transport serves it, run in this process
    sandbox/          the host's client process per cluster (its server, sandbox.child, runs KafkaAdmin)
    isolated          IsolatedKafkaAdmin: KafkaAdmin's face, each call run in the cluster's client process
    reset             forgetting every client, in this process and in the client processes it uses

This file imports nothing: Spark's executors get parts of the gateway without Django (sparkjobs.runner).
"""
