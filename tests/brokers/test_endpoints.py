"""JMX address specs and credentials (brokers/endpoints.py): pure, no servers."""

from __future__ import annotations

import pytest

from brokers.endpoints import MSG_NO_PASSWORD, jmx_addresses, jmx_password, parse_jmx_spec
from console.errors import ConsoleError

BROKERS = [(1, "kafka-1.example.com", 9092), (2, "10.0.0.2", 9094)]


def test_an_offset_a_port_or_a_list_per_broker():
    assert jmx_addresses("+10000", BROKERS) == {1: ("kafka-1.example.com", 19092), 2: ("10.0.0.2", 19094)}
    assert jmx_addresses(":9999", BROKERS) == {1: ("kafka-1.example.com", 9999), 2: ("10.0.0.2", 9999)}
    assert jmx_addresses("1=127.0.0.1:5555, 3=[::1]:5556", BROKERS) == {1: ("127.0.0.1", 5555), 3: ("::1", 5556)}


@pytest.mark.parametrize("spec", ["", "10000", "+", "+99999999", ":0", "1=host", "1=host:70000", "x=host:1",
                                  "1=ho st:1", "1=a/b:1", "1=a@b:1", "1=service:jmx:rmi:///jndi/rmi://x:1/jmxrmi"])
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
