"""Local Kafka and Redis for `make run` and the test session. Not used in production."""
