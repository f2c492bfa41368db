"""The audit witness: a copy of the audit chain in a Kafka topic, which whoever can write the database cannot
rewrite, so removed, altered or inserted rows show up when the two are compared.

- records.py: an event as the topic holds it (JSON, keyed by seq) and back.
- publisher.py: ships unpublished events in seq order, one transaction per batch (a Celery beat task runs it).
- compare.py: pure comparison of the database's rows with the topic's records.
- verify.py: audit_verify's check (chain and witness), stored for the audit page and /health.
- status.py: what the page and /health show, from the database only.
"""
