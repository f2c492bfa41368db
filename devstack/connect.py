"""A distributed Kafka Connect worker (Kafka 4.3.1's own `org.apache.kafka.connect.cli.ConnectDistributed`) run
from the jars `make deps` fetches into .cache/kafka-connect/libs (devstack/connect-pom.xml), with Kafka's
FileStream connectors and MirrorMaker 2's connectors on its class path and its internal topics on a broker.

    CONSOLE_SECRET_LOCAL_CONNECT_PASSWORD=… python -m devstack.connect run --port 8083 --home .data/connect

`make run` starts one (the `connect` process of the Procfile), its REST API behind basic authentication (user
`console`, the password make writes to .env), FileStream connectors' files in .data/connect/files; the tests start
one per session (tests/fixtures/connect.py), two where the point is how tasks move between workers, all behind
basic authentication.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from base64 import b64encode
from dataclasses import dataclass, field
from pathlib import Path

from devstack.kafka_config import log4j2_properties
from devstack.launcher import (
    SMALL_JVM, Watched, java_command, maven_jars, start_logged, stop_process, wait_until_ready,
)
from console.paths import CACHE_DIR, DATA_DIR
from devstack.tls import TlsFiles
from gateway.secret_files import write_secret_file

CONNECT_LIBS = CACHE_DIR / "kafka-connect" / "libs"
MAIN_CLASS = "org.apache.kafka.connect.cli.ConnectDistributed"
BASIC_AUTH_EXTENSION = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
LOGIN_MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
# make run's worker: the user it asks for, and the variable its password comes from (make writes it to .env; the
# console registers `local` with the same names, settings.CONNECT_LOCAL_USER and CONNECT_LOCAL_PASSWORD_ENV).
LOCAL_USER = "console"
LOCAL_PASSWORD_ENV = "CONSOLE_SECRET_LOCAL_CONNECT_PASSWORD"
MSG_NO_PASSWORD = (f"{LOCAL_PASSWORD_ENV} is not set: Kafka Connect's REST API asks for a password, and `make run` "
                   f"writes one to .env (run `make .data/.connect-password`, or set it).")


def connect_classpath(libs: Path = CONNECT_LIBS) -> str:
    maven_jars(libs, "connect-runtime-*.jar", f"Kafka Connect's jars are missing in {libs}: run `make deps` (it "
                                              "fetches them with Maven).")
    return f"{libs}/*"


@dataclass
class ConnectWorker:
    home: Path
    bootstrap: str
    port: int = 8083
    group_id: str = "console-connect"
    # The worker's internal topics are {prefix}-configs, {prefix}-offsets and {prefix}-status; two workers of one
    # Connect cluster share the group and the topics.
    topic_prefix: str = "_connect"
    heap: tuple[str, ...] = ("-Xms128m", "-Xmx512m")
    log_level: str = "WARN"
    # user -> password: the REST API then asks every caller for basic authentication.
    basic_auth: dict[str, str] | None = None
    # A folder whose files connectors may reference as ${file:PATH:KEY} (FileConfigProvider, limited to it).
    secrets_dir: Path | None = None
    # An https listener beside the http one, asking every caller for a client certificate the CA signed (mTLS);
    # its certificate is the broker's of these files (localhost, 127.0.0.1).
    https_port: int | None = None
    tls: TlsFiles | None = None
    # Short for tests: how long the leader waits for a worker that left before giving its tasks to the others.
    rebalance_delay_ms: int = 10_000
    libs: Path = CONNECT_LIBS
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def https_url(self) -> str:
        return f"https://127.0.0.1:{self.https_port}"

    @property
    def log_path(self) -> Path:
        return self.home / "connect.log"

    @property
    def config_file(self) -> Path:
        return self.home / "worker.properties"

    def properties(self) -> str:
        prefix = self.topic_prefix
        https = f",https://127.0.0.1:{self.https_port}" if self.tls and self.https_port else ""
        lines = [
            f"bootstrap.servers={self.bootstrap}",
            f"group.id={self.group_id}",
            f"listeners=http://127.0.0.1:{self.port}{https}",
            "rest.advertised.listener=http",
            "rest.advertised.host.name=127.0.0.1",
            f"rest.advertised.port={self.port}",
            # Records as text, so what a FileStream connector writes is the record's value as it was produced.
            "key.converter=org.apache.kafka.connect.storage.StringConverter",
            "value.converter=org.apache.kafka.connect.storage.StringConverter",
            f"config.storage.topic={prefix}-configs",
            f"offset.storage.topic={prefix}-offsets",
            f"status.storage.topic={prefix}-status",
            "config.storage.replication.factor=1",
            "offset.storage.replication.factor=1",
            "status.storage.replication.factor=1",
            "offset.storage.partitions=5",
            "status.storage.partitions=1",
            # Source offsets reach the offsets topic within a second, so a page shows them soon after a record.
            "offset.flush.interval.ms=1000",
            f"scheduled.rebalance.max.delay.ms={self.rebalance_delay_ms}",
            # Sink connectors may set consumer.override.* (auto.offset.reset, a group id of their own).
            "connector.client.config.override.policy=All",
            f"plugin.path={self.home / 'plugins'}",
        ]
        if self.secrets_dir is not None:
            lines += ["config.providers=file",
                      "config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider",
                      f"config.providers.file.param.allowed.paths={self.secrets_dir}"]
        if self.basic_auth:
            lines.append(f"rest.extension.classes={BASIC_AUTH_EXTENSION}")
        if https:
            password = (self.home / "tls" / "password").read_text().strip()
            for store in ("keystore", "truststore"):
                lines += [f"listeners.https.ssl.{store}.type=PKCS12",
                          f"listeners.https.ssl.{store}.location={self.home / 'tls' / f'{store}.p12'}",
                          f"listeners.https.ssl.{store}.password={password}"]
            lines += [f"listeners.https.ssl.key.password={password}", "listeners.https.ssl.client.auth=required"]
        return "\n".join(lines) + "\n"

    def _tls_stores(self) -> None:
        """Jetty reads Java key stores, not PEM: a PKCS#12 key store of the certificate and its key, and a trust
        store of the CA made by keytool (which marks the CA trusted, as Java asks)."""
        import secrets
        import subprocess

        from cryptography import x509
        from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, load_pem_private_key, pkcs12

        folder = self.home / "tls"
        folder.mkdir(exist_ok=True, mode=0o700)
        password = secrets.token_urlsafe(16)
        write_secret_file(folder / "password", password)
        pem = self.tls.broker_keystore.read_bytes()
        key = load_pem_private_key(pem, password=None)
        chain = x509.load_pem_x509_certificates(pem)
        keystore = folder / "keystore.p12"
        keystore.write_bytes(pkcs12.serialize_key_and_certificates(
            b"connect", key, chain[0], chain[1:], BestAvailableEncryption(password.encode())))
        keystore.chmod(0o600)
        truststore = folder / "truststore.p12"
        truststore.unlink(missing_ok=True)
        subprocess.run(["keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", str(self.tls.ca),
                        "-keystore", str(truststore), "-storetype", "PKCS12", "-storepass", password],
                       check=True, capture_output=True)

    def prepare(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "plugins").mkdir(exist_ok=True)
        if self.tls and self.https_port:
            self._tls_stores()
        write_secret_file(self.config_file, self.properties())
        (self.home / "log4j2.properties").write_text(log4j2_properties(self.log_level))
        if self.basic_auth:
            users = self.home / "rest-users.properties"
            write_secret_file(users, "".join(f"{user}: {password}\n" for user, password in self.basic_auth.items()))
            write_secret_file(self.home / "rest-jaas.conf",
                              f'KafkaConnect {{\n  {LOGIN_MODULE} required file="{users}";\n}};\n')

    def command(self) -> list[str]:
        options = [*SMALL_JVM, "-Djava.awt.headless=true",
                   f"-Dlog4j2.configurationFile={self.home / 'log4j2.properties'}"]
        if self.basic_auth:
            options.append(f"-Djava.security.auth.login.config={self.home / 'rest-jaas.conf'}")
        return java_command(MAIN_CLASS, self.config_file, heap=self.heap, options=options,
                            classpath=connect_classpath(self.libs))

    def start(self) -> None:
        self.prepare()
        self.process = start_logged(self.command(), self.log_path, cwd=self.home)

    def _headers(self) -> dict[str, str]:
        if not self.basic_auth:
            return {}
        user, password = next(iter(self.basic_auth.items()))
        return {"Authorization": "Basic " + b64encode(f"{user}:{password}".encode()).decode()}

    def ready(self) -> bool:
        """KIP-1017's /health: 200 once the worker has joined its group and read its config topic."""
        request = urllib.request.Request(f"{self.url}/health", headers=self._headers())
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                return response.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def wait_ready(self, timeout: float = 120.0) -> None:
        wait_until_ready(self.ready, what=f"Kafka Connect on port {self.port}", timeout=timeout, interval=0.5,
                         watch=[Watched("Kafka Connect", self.process, self.log_path)])

    def stop(self, timeout: float = 20.0) -> None:
        stop_process(self.process, timeout=timeout)


def _broker_listens(bootstrap: str) -> bool:
    host, _, port = bootstrap.split(",")[0].rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=1):
            return True
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["run"])
    parser.add_argument("--port", type=int, default=int(os.environ.get("CONNECT_PORT", 8083)))
    parser.add_argument("--bootstrap", default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS") or "127.0.0.1:9092")
    parser.add_argument("--home", type=Path, default=DATA_DIR / "connect")
    args = parser.parse_args(argv)
    password = os.environ.get(LOCAL_PASSWORD_ENV)
    if not password:
        print(MSG_NO_PASSWORD, file=sys.stderr, flush=True)
        return 2
    home = args.home.resolve()
    worker = ConnectWorker(home=home, bootstrap=args.bootstrap, port=args.port, basic_auth={LOCAL_USER: password},
                           secrets_dir=home / "secrets", heap=("-Xms128m", "-Xmx768m"))
    for folder in ("secrets", "files"):  # files: where operators' FileStream connectors may read and write
        (home / folder).mkdir(parents=True, exist_ok=True, mode=0o700)
    # `make run` starts the broker beside this worker, and a worker that finds no broker gives up after a minute:
    # wait for the broker's port first, so the two start in any order.
    deadline = time.monotonic() + 180
    while not _broker_listens(worker.bootstrap) and time.monotonic() < deadline:
        time.sleep(1)
    stopping = False

    def stop(_signum, _frame) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    worker.start()
    print(f"Kafka Connect starting on {worker.url} (internal topics {worker.topic_prefix}-*, broker "
          f"{worker.bootstrap}), log in {worker.log_path}", flush=True)
    try:
        while not stopping and worker.process.poll() is None:
            time.sleep(0.2)
    finally:
        worker.stop()
    if stopping:
        return 0
    print(f"Kafka Connect exited with code {worker.process.returncode}; see {worker.log_path}", file=sys.stderr,
          flush=True)
    return worker.process.returncode or 1


if __name__ == "__main__":
    sys.exit(main())
