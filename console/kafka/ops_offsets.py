"""Temporary: the old path, for the callers whose move to the new one is not committed yet (offsets, tests/conftest.py
and tests/console/clusters/test_client_settings.py, being edited as the gateway was split). Delete with them."""

from console.kafka.types import EARLIEST, LATEST, STABLE  # noqa: F401
