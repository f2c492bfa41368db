"""The gateway's operations over Kafka's Java clients, where librdkafka has no such call: the Admin client in a
JVM driven through py4j (bridge), Kafka's command-line tools (tools), and the client settings both need (config)."""
