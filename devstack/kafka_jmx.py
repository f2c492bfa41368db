"""JMX on a dev-stack broker: Java's own agent (com.sun.management.jmxremote) on one loopback port that serves both
the RMI registry and the connector, so the console (gateway/kafka/java/jmx.py) and Kafka's JmxTool read the same
MBeans. Optionally with a password (the agent's password and access files) and TLS (a PKCS#12 key store made from
the session's PEM files), for the tests that prove the console sends its credentials and checks the server."""

from __future__ import annotations

import os
import secrets
import socket
from dataclasses import dataclass, field
from pathlib import Path

from devstack.tls import TlsFiles
from gateway.secret_files import write_secret_file

# `make run`'s brokers listen for JMX at their Kafka port plus this (9092 -> 19092; with three brokers 19092, 19094,
# 19096), which is the `local` cluster's metrics source "+10000" seeded by migrate.
DEV_JMX_PORT_OFFSET = 10000


MSG_NO_DEV_JMX = "JMX of the broker on {port} is off: 127.0.0.1:{jmx} is taken or out of range."
# `make run`'s brokers ask for this read-only user and the password `make` writes to .env under this name (a name
# meant for cluster secrets: the `local` cluster's metrics source reads the same variable, brokers/conf.py).
DEV_JMX_USER = "monitor"
DEV_JMX_PASSWORD_ENV = "CONSOLE_SECRET_LOCAL_JMX_PASSWORD"
MSG_NO_DEV_JMX_PASSWORD = ("JMX of the broker on {port} is off: ${env} holds no password for it (`make` writes one to "
                           ".env; a JMX agent without one lets every user of this host read and call the broker's "
                           "MBeans).")


def dev_jmx_port(kafka_port: int) -> int | None:
    """The JMX port of a `make run` broker, or None when it is past 65535 or taken: a broker whose JMX agent cannot
    bind does not start at all, and the broker matters more than its metrics."""
    port = kafka_port + DEV_JMX_PORT_OFFSET
    if port > 65535:
        return None
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return None
    return port


@dataclass(frozen=True)
class JmxSecurity:
    """A JMX user (read-only) whose password the caller keeps, and TLS from the session's certificates."""

    username: str
    password: str = field(repr=False)
    tls: TlsFiles | None = None


def dev_jmx_security() -> JmxSecurity | None:
    """The user and password of `make run`'s brokers' JMX, from the environment; None when it holds none."""
    password = os.environ.get(DEV_JMX_PASSWORD_ENV, "")
    return JmxSecurity(DEV_JMX_USER, password) if password else None


def jmx_options(port: int, home: Path, security: JmxSecurity | None = None) -> list[str]:
    """The broker's JVM options for JMX on 127.0.0.1:`port` (files it needs are written under `home`)."""
    options = [
        "-Dcom.sun.management.jmxremote",
        f"-Dcom.sun.management.jmxremote.port={port}",
        f"-Dcom.sun.management.jmxremote.rmi.port={port}",  # one port: nothing else to open or guess
        "-Dcom.sun.management.jmxremote.host=127.0.0.1",  # loopback only, whatever the host's interfaces
        "-Djava.rmi.server.hostname=127.0.0.1",  # the address the connector's stub tells clients to call back
        "-Dcom.sun.management.jmxremote.local.only=false",
    ]
    if security is None:
        return options + ["-Dcom.sun.management.jmxremote.authenticate=false",
                          "-Dcom.sun.management.jmxremote.ssl=false"]
    folder = home / "jmx"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    passwords, access = folder / "jmxremote.password", folder / "jmxremote.access"
    # The agent refuses to start unless only its owner can read the password file; it is never readable by others.
    write_secret_file(passwords, f"{security.username} {security.password}\n")
    write_secret_file(access, f"{security.username} readonly\n")
    options += ["-Dcom.sun.management.jmxremote.authenticate=true",
                f"-Dcom.sun.management.jmxremote.password.file={passwords}",
                f"-Dcom.sun.management.jmxremote.access.file={access}"]
    if security.tls is None:
        return options + ["-Dcom.sun.management.jmxremote.ssl=false"]
    store, store_password = _keystore(security.tls, folder)
    # The key store's password goes in a 0600 file the agent reads, not on the command line `ps` shows.
    ssl_config = write_secret_file(folder / "jmxremote-ssl.properties",
                                   f"javax.net.ssl.keyStore={store}\njavax.net.ssl.keyStoreType=PKCS12\n"
                                   f"javax.net.ssl.keyStorePassword={store_password}\n")
    return options + ["-Dcom.sun.management.jmxremote.ssl=true",
                      "-Dcom.sun.management.jmxremote.registry.ssl=true",
                      "-Dcom.sun.management.jmxremote.ssl.need.client.auth=false",
                      f"-Dcom.sun.management.jmxremote.ssl.config.file={ssl_config}"]


def _keystore(tls: TlsFiles, folder: Path) -> tuple[Path, str]:
    """Java's agent reads a key store, not PEM: the broker's key and certificate chain as PKCS#12."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, load_pem_private_key, pkcs12

    password = secrets.token_urlsafe(16)
    pem = tls.broker_keystore.read_bytes()
    chain = x509.load_pem_x509_certificates(pem)
    store = folder / "jmx-keystore.p12"
    store.write_bytes(pkcs12.serialize_key_and_certificates(
        b"jmx", load_pem_private_key(pem, password=None), chain[0], chain[1:],
        BestAvailableEncryption(password.encode())))
    store.chmod(0o600)
    return store, password
