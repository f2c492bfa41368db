"""A schema registry that speaks Confluent's REST API, for `make run` and the tests: Apicurio Registry 2.4.2,
built by `make deps` into .cache/schema-registry/quarkus-app (devstack/registry-pom.xml), with in-memory
storage (H2), listening on 127.0.0.1. Clients use `SchemaRegistry.url`, the Confluent compatible API under
/apis/ccompat/v7.

`make run`'s registry (this module's `main`) speaks only HTTPS and asks every client for a certificate its CA
signed (devstack/registry_tls.py): the console's, whose key no other user of the host can read, so only
the console reaches it. Apicurio's own authentication needs an OpenID Connect server; Quarkus's basic auth with
users from its configuration cannot be used beside Apicurio's authentication mechanism in this build (README,
"Security"). The tests' session registry is plain HTTP on a port of the session's.

    python -m devstack.schema_registry --port 8081 --home .data/registry --tls-dir .data/certs/registry

Measured on this machine (2 cores, OpenJDK 17): it answers GET /subjects 2.9 to 3.7 s after start, in about
175 MB resident. The dev stack keeps schemas in an H2 file under its home (.data/registry); the tests' registry
keeps them in memory, so each session starts empty. Where Apicurio differs from
Confluent's registry: the global compatibility is NONE, some error codes differ, and a PROTOBUF schema comes
back as it was registered (never as a serialized descriptor, whatever `format` asks).
"""

from __future__ import annotations

import argparse
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from devstack.launcher import SMALL_JVM, Watched, java_command, start_logged, stop_process, wait_until_ready
from console.paths import DATA_DIR, REGISTRY_APP
from devstack.registry_tls import RegistryTls, ensure_registry_tls
from gateway.secret_files import write_secret_file

MSG_NO_CLIENT_AUTH = ("The schema registry at {app} answers clients without a certificate: it was built before it "
                      "asked for them. Run `make deps` (it builds it again from devstack/registry-pom.xml).")


@dataclass
class SchemaRegistry:
    home: Path
    port: int = 8081
    app: Path = REGISTRY_APP
    # Keep schemas in an H2 file under `home` across restarts (the dev stack); tests use memory.
    persistent: bool = False
    # HTTPS only, and only for clients with a certificate these files' CA signed (the dev stack).
    tls: RegistryTls | None = None
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/apis/ccompat/v7"

    @property
    def log_path(self) -> Path:
        return self.home / "registry.log"

    def command(self) -> list[str]:
        # Unprofiled system properties win over the %prod ones in Apicurio's application.properties.
        settings = {
            "quarkus.http.host": "127.0.0.1",
            "quarkus.http.port": str(self.port),
            # In-memory H2 (Apicurio's default storage); kept while the process lives, whatever the pool does.
            "quarkus.datasource.jdbc.url": (f"jdbc:h2:file:{self.home / 'registry_db'}" if self.persistent
                                            else "jdbc:h2:mem:registry_db;DB_CLOSE_DELAY=-1"),
            "quarkus.datasource.jdbc.initial-size": "2",
            "quarkus.datasource.jdbc.min-size": "2",
            "quarkus.datasource.jdbc.max-size": "20",
            "registry.auth.enabled": "false",
            # Sentry is off; its client still warns at the first request that it has nowhere to send.
            'quarkus.log.category."io.sentry".level': "ERROR",
        }
        if self.tls is not None:
            # The trust store's password goes in a 0600 file with the rest, not on the command line.
            settings["quarkus.config.locations"] = str(self._tls_config())
        return java_command(self.app, heap=("-Xmx192m",), options=(
            *SMALL_JVM, *(f"-D{name}={value}" for name, value in settings.items())))

    def _tls_config(self) -> Path:
        tls = self.tls
        lines = {"quarkus.http.insecure-requests": "disabled", "quarkus.http.ssl-port": str(self.port),
                 "quarkus.http.ssl.certificate.files": str(tls.server_cert),
                 "quarkus.http.ssl.certificate.key-files": str(tls.server_key),
                 "quarkus.http.ssl.certificate.trust-store-file": str(tls.trust_store),
                 "quarkus.http.ssl.certificate.trust-store-file-type": "PKCS12",
                 "quarkus.http.ssl.certificate.trust-store-password": tls.trust_store_password.read_text()}
        return write_secret_file(self.home / "tls.properties", "".join(f"{k}={v}\n" for k, v in lines.items()))

    def client_context(self, *, certificate: bool = True) -> ssl.SSLContext | None:
        """What a client of the TLS registry needs: its CA, and (unless not) the console's certificate."""
        if self.tls is None:
            return None
        context = ssl.create_default_context(cafile=str(self.tls.ca))
        if certificate:
            context.load_cert_chain(str(self.tls.client_cert), str(self.tls.client_key))
        return context

    def start(self) -> None:
        if not self.app.is_file():
            raise SystemExit(f"The schema registry is missing ({self.app}): run `make deps`.")
        self.home.mkdir(parents=True, exist_ok=True)
        self.process = start_logged(self.command(), self.log_path, cwd=self.home)

    def ready(self, *, certificate: bool = True) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/subjects", timeout=2,
                                        context=self.client_context(certificate=certificate)) as response:
                return response.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def wait_ready(self, timeout: float = 90.0) -> None:
        """Until it answers; with TLS, then refuses to run a build that answers a client without a certificate."""
        wait_until_ready(self.ready, what=f"the schema registry on port {self.port}", timeout=timeout,
                         watch=[Watched("the schema registry", self.process, self.log_path)])
        if self.tls is not None and self.ready(certificate=False):
            self.stop()
            raise SystemExit(MSG_NO_CLIENT_AUTH.format(app=self.app))

    def stop(self) -> None:
        stop_process(self.process, timeout=15)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=int(os.environ.get("SCHEMA_REGISTRY_PORT", 8081)))
    parser.add_argument("--home", type=Path, default=DATA_DIR / "registry")
    parser.add_argument("--tls-dir", type=Path, default=DATA_DIR / "certs" / "registry",
                        help="the registry's and the console's certificates (made here when missing)")
    args = parser.parse_args(argv)
    registry = SchemaRegistry(home=args.home.resolve(), port=args.port, persistent=True,
                              tls=ensure_registry_tls(args.tls_dir.resolve()))
    stopping = False

    def stop(_signum, _frame) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    registry.start()
    print(f"Schema registry (Apicurio) starting on {registry.url} for clients with the certificate in "
          f"{args.tls_dir}, log in {registry.log_path}", flush=True)
    try:
        registry.wait_ready(timeout=180)
        while not stopping and registry.process.poll() is None:
            time.sleep(0.2)
    finally:
        registry.stop()
    if stopping:
        return 0
    print(f"The schema registry exited with code {registry.process.returncode}; see {registry.log_path}",
          file=sys.stderr, flush=True)
    return registry.process.returncode or 1


if __name__ == "__main__":
    sys.exit(main())
