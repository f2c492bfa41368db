"""JMX address specs and credentials (brokers/endpoints.py): pure, no servers."""

from __future__ import annotations

import pytest

from brokers.endpoints import (MSG_NO_PASSWORD, Addresses, jmx_addresses, jmx_password, parse_jmx_spec,
                               registered_hosts)
from console.errors import ConsoleError

BROKERS = [(1, "kafka-1.example.com", 9092), (2, "10.0.0.2", 9094)]
REGISTERED = registered_hosts("KAFKA-1.example.com:9092, 10.0.0.2:9094")


def test_an_offset_a_port_a_template_or_a_list_per_broker():
    assert jmx_addresses("+10000", BROKERS, REGISTERED).found == {1: ("kafka-1.example.com", 19092),
                                                                  2: ("10.0.0.2", 19094)}
    assert jmx_addresses(":9999", BROKERS, REGISTERED).found == {1: ("kafka-1.example.com", 9999),
                                                                 2: ("10.0.0.2", 9999)}
    assert jmx_addresses("jmx-{id}.example.com:9999", BROKERS, set()).found == {
        1: ("jmx-1.example.com", 9999), 2: ("jmx-2.example.com", 9999)}
    assert jmx_addresses("jmx-{id}.example.com:+1000", BROKERS, set()).found == {
        1: ("jmx-1.example.com", 10092), 2: ("jmx-2.example.com", 10094)}
    assert jmx_addresses("1=127.0.0.1:5555, 3=[::1]:5556", BROKERS, set()) == Addresses(
        {1: ("127.0.0.1", 5555), 3: ("::1", 5556)})


def test_a_host_only_the_cluster_names_gets_no_jmx_address():
    """A cluster may list its brokers at any host it likes: with '+OFFSET' or ':PORT' only the registration's
    hosts are asked (a template or a list is the admin's own)."""
    listed = [(1, "kafka-1.example.com", 9092), (2, "collector.attacker.example", 9094), (3, "[::1]", 9096)]
    found = jmx_addresses(":9999", listed, registered_hosts("kafka-1.example.com:9092,[::1]:9096"))
    assert found == Addresses({1: ("kafka-1.example.com", 9999), 3: ("[::1]", 9999)},
                              {2: "collector.attacker.example"})
    assert jmx_addresses("+10000", listed, set()).found == {}
    assert jmx_addresses("+10000", listed, None).found.keys() == {1, 2, 3}  # an exporter's host: any
    assert registered_hosts("SASL_SSL://Broker-1:9093,[::1]:9092,10.0.0.1:9092") == {"broker-1", "::1", "10.0.0.1"}


@pytest.mark.parametrize("spec", ["", "10000", "+", "+99999999", ":0", "1=host", "1=host:70000", "x=host:1",
                                  "1=ho st:1", "1=a/b:1", "1=a@b:1", "1=service:jmx:rmi:///jndi/rmi://x:1/jmxrmi",
                                  "kafka-{id}.example.com", "kafka-{host}:9999", "{id}{id}@x:1", "k/{id}:1",
                                  "kafka-{id}:70000", "-{id}-:1"])
def test_anything_else_is_refused_before_it_reaches_the_jvm(spec):
    with pytest.raises(ConsoleError):
        parse_jmx_spec(spec)


def test_the_password_comes_from_the_environment_only(monkeypatch):
    assert jmx_password("c", "", "CONSOLE_SECRET_X") == ""
    monkeypatch.delenv("CONSOLE_SECRET_JMX_TEST", raising=False)
    with pytest.raises(ConsoleError, match=r"\$CONSOLE_SECRET_JMX_TEST, which is not set"):
        jmx_password("c", "monitor", "CONSOLE_SECRET_JMX_TEST")
    monkeypatch.setenv("CONSOLE_SECRET_JMX_TEST", "s3cret")
    assert jmx_password("c", "monitor", "CONSOLE_SECRET_JMX_TEST") == "s3cret"
    assert MSG_NO_PASSWORD
