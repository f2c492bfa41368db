"""A cluster's client settings, which the console keeps in librdkafka's vocabulary, in the vocabulary of Kafka's Java
clients: Spark's Kafka source, Kafka's command-line tools and the Java Admin client all need it, and several keys
differ (SASL credentials become a JAAS line, PEM file locations become PEM trust and key stores)."""

from __future__ import annotations

from pathlib import Path

# Keys that mean the same in both clients. A cluster may only carry settings on the registration allowlist
# (console/clusters/client_settings.py); each of these is on it, and the tests hold the two together.
_SAME = {"security.protocol", "client.id", "request.timeout.ms", "socket.connection.setup.timeout.ms",
         "reconnect.backoff.ms", "reconnect.backoff.max.ms", "retry.backoff.ms", "metadata.max.age.ms",
         "ssl.key.password", "client.dns.lookup", "ssl.cipher.suites"}
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


class UntranslatableConfig(ValueError):
    """A setting the Java clients cannot be given; its message names the key."""


def _jaas_quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def java_client_config(config: dict[str, str]) -> dict[str, str]:
    """Java client properties equivalent to librdkafka `config`. Keys with no Java meaning (librdkafka's own
    tuning) are left out; settings that would change security but cannot be carried over raise."""
    java: dict[str, str] = {k: str(v) for k, v in config.items() if k in _SAME}
    if "security.protocol" in java:
        java["security.protocol"] = java["security.protocol"].upper()
    mechanism = str(config.get("sasl.mechanism") or config.get("sasl.mechanisms") or "").upper()
    if mechanism:
        java["sasl.mechanism"] = mechanism
    if "sasl.username" in config:
        module = _LOGIN_MODULES.get(mechanism or "PLAIN")
        if module is None:
            raise UntranslatableConfig(f"SASL mechanism {mechanism} with a username has no Java login module here.")
        java["sasl.jaas.config"] = (f"{module} required username={_jaas_quote(str(config['sasl.username']))} "
                                    f"password={_jaas_quote(str(config.get('sasl.password', '')))};")
    if "ssl.ca.location" in config:
        java["ssl.truststore.type"] = "PEM"
        java["ssl.truststore.location"] = str(config["ssl.ca.location"])
    if "ssl.certificate.location" in config or "ssl.key.location" in config:
        for needed in ("ssl.certificate.location", "ssl.key.location"):
            if needed not in config:
                raise UntranslatableConfig(f"{needed} is needed with the other of the client's certificate and "
                                           "key locations.")
        try:
            java["ssl.keystore.certificate.chain"] = Path(config["ssl.certificate.location"]).read_text()
            java["ssl.keystore.key"] = Path(config["ssl.key.location"]).read_text()
        except OSError as exc:
            raise UntranslatableConfig(f"The client certificate or key cannot be read: {exc.strerror}.") from exc
        java["ssl.keystore.type"] = "PEM"
    algorithm = config.get("ssl.endpoint.identification.algorithm")
    if algorithm is not None:
        java["ssl.endpoint.identification.algorithm"] = "" if str(algorithm).lower() == "none" else str(algorithm)
    return java


def properties_text(java: dict[str, str]) -> str:
    """A Java properties file of `java`, escaped so keys and values survive any character."""

    def escape(text: str, key: bool = False) -> str:
        out = []
        for i, ch in enumerate(text):
            if ch in "\\#!=:" or (key and ch == " ") or (ch == " " and i == 0):
                out.append("\\" + ch)
            elif ch == "\n":
                out.append("\\n")
            elif ch == "\r":
                out.append("\\r")
            elif ord(ch) > 126 or ord(ch) < 32:  # one \u escape per UTF-16 unit: a surrogate pair past the BMP
                units = ch.encode("utf-16-be")
                out.extend(f"\\u{units[j] << 8 | units[j + 1]:04x}" for j in range(0, len(units), 2))
            else:
                out.append(ch)
        return "".join(out)

    return "".join(f"{escape(k, key=True)}={escape(v)}\n" for k, v in java.items())
