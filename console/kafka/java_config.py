"""Temporary: the old path, for the callers whose move to the new one is not committed yet (offsets, tests/conftest.py
and tests/console/clusters/test_client_settings.py, being edited as the gateway was split). Delete with them."""

from console.kafka.java.config import _SAME, UntranslatableConfig, java_client_config, properties_text  # noqa: F401
