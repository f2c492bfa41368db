"""IsolatedKafkaAdmin: KafkaAdmin's face, with every call run in the cluster's own client process."""

from __future__ import annotations

import inspect

from console.kafka import sandbox
from console.kafka.admin import KafkaAdmin
from console.kafka.types import GatewayFace
from console.timing import timed


class IsolatedKafkaAdmin(GatewayFace):
    """Callers cannot tell it from KafkaAdmin: same methods, same dataclasses, same exceptions."""


def _forwarder(name: str):
    def forward(self: IsolatedKafkaAdmin, *args, **kwargs):
        with timed("kafka"):
            return sandbox.call(self.connection, name, args, kwargs, timeout=self.timeout,
                                backoff=self.unreachable_backoff)

    original = getattr(KafkaAdmin, name)
    forward.__name__, forward.__qualname__ = name, f"IsolatedKafkaAdmin.{name}"
    forward.__doc__ = original.__doc__
    forward.__signature__ = inspect.signature(original)
    return forward


PUBLIC_OPERATIONS = tuple(
    name for name, member in inspect.getmembers(KafkaAdmin, inspect.isfunction) if not name.startswith("_")
)
for _name in PUBLIC_OPERATIONS:
    setattr(IsolatedKafkaAdmin, _name, _forwarder(_name))
