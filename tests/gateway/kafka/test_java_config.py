"""librdkafka settings carried over to Kafka's Java clients (pure; the secured broker tests use them for real)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.kafka.java.config import UntranslatableConfig, java_client_config, properties_text


def test_scram_over_tls_becomes_a_jaas_line_and_a_pem_truststore():
    java = java_client_config({"security.protocol": "sasl_ssl", "sasl.mechanism": "SCRAM-SHA-512",
                               "sasl.username": 'ops"1', "sasl.password": "p\\w", "ssl.ca.location": "/ca.pem",
                               "statistics.interval.ms": "1000"})
    assert java == {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                            'username="ops\\"1" password="p\\\\w";',
        "ssl.truststore.type": "PEM", "ssl.truststore.location": "/ca.pem",
    }


def test_client_certificates_are_inlined_as_a_pem_keystore(tmp_path):
    (tmp_path / "c.pem").write_text("CERT")
    (tmp_path / "k.pem").write_text("KEY")
    java = java_client_config({"security.protocol": "SSL", "ssl.certificate.location": str(tmp_path / "c.pem"),
                               "ssl.key.location": str(tmp_path / "k.pem"),
                               "ssl.endpoint.identification.algorithm": "none"})
    assert java["ssl.keystore.type"] == "PEM" and java["ssl.keystore.certificate.chain"] == "CERT"
    assert java["ssl.keystore.key"] == "KEY" and java["ssl.endpoint.identification.algorithm"] == ""


@pytest.mark.parametrize(("config", "message"), [
    ({"ssl.certificate.location": "/c.pem"}, "ssl.key.location is needed"),
    ({"ssl.certificate.location": "/nope/c.pem", "ssl.key.location": "/nope/k.pem"}, "cannot be read"),
    ({"sasl.mechanism": "GSSAPI", "sasl.username": "u"}, "no Java login module"),
])
def test_settings_that_cannot_be_carried_over_are_refused_with_the_key(config, message):
    with pytest.raises(UntranslatableConfig, match=message):
        java_client_config(config)


def _parse_properties(text: str) -> dict[str, str]:
    """Java's Properties.load rules for the escapes properties_text writes."""
    result = {}
    for line in text.splitlines():
        out, key, i = [], None, 0
        while i < len(line):
            ch = line[i]
            if ch == "\\":
                nxt = line[i + 1]
                if nxt == "u":
                    out.append(chr(int(line[i + 2:i + 6], 16)))
                    i += 6
                    continue
                out.append({"n": "\n", "r": "\r", "t": "\t"}.get(nxt, nxt))
                i += 2
                continue
            if ch == "=" and key is None:
                key, out = "".join(out), []
            else:
                out.append(ch)
            i += 1
        value = "".join(out).encode("utf-16", "surrogatepass").decode("utf-16")
        result[key.encode("utf-16", "surrogatepass").decode("utf-16")] = value
    return result


@given(st.dictionaries(st.text(min_size=1, max_size=20).filter(lambda k: not k.startswith(("#", "!"))),
                       st.text(max_size=40), max_size=5))
def test_properties_survive_any_character(properties):
    assert _parse_properties(properties_text(properties)) == properties
