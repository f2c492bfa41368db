"""TLS with client certificates for `make run`'s schema registry: only a client holding the console's certificate
(its key is 0600 under .data/certs, the folder cluster files may come from) gets past the handshake, so no other
user of the host reaches the registry's REST API. Made once and kept across restarts (the `local` cluster's
registration names the files), made again when missing or within 30 days of expiring.

    ensure_registry_tls(DATA_DIR / "certs" / "registry")
"""

from __future__ import annotations

import datetime
import ipaddress
import secrets
from dataclasses import dataclass
from pathlib import Path

from devstack.tls import _certificate, _key, _pem_cert, _pem_key
from gateway.secret_files import write_secret_file

VALID_DAYS = 825
RENEW_DAYS = 30


@dataclass(frozen=True)
class RegistryTls:
    folder: Path

    @property
    def ca(self) -> Path:  # the console checks the registry's certificate against it
        return self.folder / "ca.pem"

    @property
    def server_cert(self) -> Path:
        return self.folder / "registry.pem"

    @property
    def server_key(self) -> Path:
        return self.folder / "registry-key.pem"

    @property
    def client_cert(self) -> Path:  # the console's, which the registry asks for
        return self.folder / "console.pem"

    @property
    def client_key(self) -> Path:
        return self.folder / "console-key.pem"

    @property
    def trust_store(self) -> Path:  # the CA again, as the Java trust store the registry reads
        return self.folder / "registry-trust.p12"

    @property
    def trust_store_password(self) -> Path:
        return self.folder / "registry-trust.password"

    def complete(self) -> bool:
        paths = (self.ca, self.server_cert, self.server_key, self.client_cert, self.client_key, self.trust_store,
                 self.trust_store_password)
        return all(p.is_file() for p in paths) and _days_left(self.client_cert) > RENEW_DAYS


def _days_left(pem: Path) -> float:
    from cryptography import x509

    try:
        certificate = x509.load_pem_x509_certificate(pem.read_bytes())
    except (OSError, ValueError):
        return 0.0
    left = certificate.not_valid_after_utc - datetime.datetime.now(datetime.UTC)
    return left.total_seconds() / 86400


def ensure_registry_tls(folder: Path) -> RegistryTls:
    """The registry's and the console's certificates in `folder` (0700), made when missing or expiring."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12

    tls = RegistryTls(folder)
    if tls.complete():
        return tls
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    days = datetime.timedelta(days=VALID_DAYS)
    ca_key, server_key, client_key = _key(), _key(), _key()
    ca = _certificate("console-registry-ca", ca_key, None, None, ca=True, valid_for=days)
    server = _certificate("localhost", server_key, ca.subject, ca_key, ca=False, valid_for=days, sans=[
        x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    client = _certificate("console", client_key, ca.subject, ca_key, ca=False, client=True, valid_for=days)
    password = secrets.token_urlsafe(16)
    write_secret_file(tls.server_key, _pem_key(server_key))
    write_secret_file(tls.client_key, _pem_key(client_key))
    write_secret_file(tls.trust_store_password, password)
    write_secret_file(tls.trust_store, pkcs12.serialize_java_truststore(
        [pkcs12.PKCS12Certificate(ca, b"console-registry-ca")], BestAvailableEncryption(password.encode())))
    write_secret_file(tls.server_cert, _pem_cert(server) + _pem_cert(ca))
    write_secret_file(tls.client_cert, _pem_cert(client))
    write_secret_file(tls.ca, _pem_cert(ca))  # written last: complete() sees a whole set or makes one
    return tls
