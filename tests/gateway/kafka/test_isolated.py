"""The isolated gateway's face, written out method by method, is KafkaAdmin's: the same public methods with the
same parameters (names, kinds, defaults), so a caller cannot tell which one it holds and go-to-definition lands on
code that runs in the caller's process."""

from __future__ import annotations

import inspect

from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.isolated import PUBLIC_OPERATIONS, IsolatedKafkaAdmin


def _public(cls) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls, inspect.isfunction) if not name.startswith("_")}


def test_the_same_methods():
    assert _public(IsolatedKafkaAdmin) == _public(KafkaAdmin) == set(PUBLIC_OPERATIONS)


def test_the_same_parameters():
    differ = []
    for name in _public(KafkaAdmin):
        local, isolated = inspect.signature(getattr(KafkaAdmin, name)), inspect.signature(getattr(IsolatedKafkaAdmin, name))
        shape = [(p.name, p.kind, p.default) for p in local.parameters.values()]
        if shape != [(p.name, p.kind, p.default) for p in isolated.parameters.values()]:
            differ.append(name)
    assert differ == []


def test_every_call_crosses_to_the_client_process(monkeypatch):
    from gateway.kafka import isolated
    from gateway.kafka.types import ClusterConnection

    sent = []
    monkeypatch.setattr(isolated, "call", lambda connection, name, args, kwargs, **_: sent.append((name, kwargs)))
    gateway = IsolatedKafkaAdmin(ClusterConnection("c", "127.0.0.1:1"), timeout=1.0)
    gateway.add_partitions("orders", new_total=3)
    gateway.describe_topics(["a", "b"])
    assert sent == [("add_partitions", {"name": "orders", "new_total": 3, "validate_only": False}),
                    ("describe_topics", {"names": ["a", "b"], "skip_missing": False})]
