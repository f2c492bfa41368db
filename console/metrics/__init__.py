"""/metrics for Prometheus: what the lag sampler, the recorder, the audit log and replays already store, read from
the database only, so a scrape answers fast whatever the Kafka clusters do."""
