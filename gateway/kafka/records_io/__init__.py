"""Records over librdkafka consumers and producers: a page of a partition, tailing a topic, searching it in bounded
chunks with filters, producing one record and appending conditionally. The schema registry decodes them
(gateway.kafka.schema_registry)."""
