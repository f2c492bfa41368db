"""The gateway's operations over librdkafka (confluent-kafka's AdminClient): the cached clients and their bounds,
error mapping, and one module per group of operations. Nothing here knows the Java bridge or the client processes."""
