"""The client process waits longer for the operations that start Kafka's Java client: the list it uses must name
exactly those."""

from __future__ import annotations

import inspect

from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.isolated import PUBLIC_OPERATIONS
from gateway.kafka.sandbox.client_processes import JAVA_OPERATIONS


def test_the_java_operations_are_the_ones_that_use_the_java_client():
    uses_java = {name for name in PUBLIC_OPERATIONS
                 if "self._java(" in (source := inspect.getsource(getattr(KafkaAdmin, name)))
                 or "bridge." in source}
    assert uses_java == JAVA_OPERATIONS
