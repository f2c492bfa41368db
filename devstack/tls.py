"""Certificates for a secured local broker, made fresh per test session: a CA, the broker's certificate (for
127.0.0.1 and localhost), a client certificate signed by the CA (mTLS), and a second, untrusted CA with its own
client certificate (to prove an untrusted certificate is refused). PEM files only: Kafka and librdkafka read them.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TlsFiles:
    ca: Path  # trusted CA certificate
    broker_keystore: Path  # broker key (PKCS#8) followed by its certificate
    client_cert: Path
    client_key: Path
    untrusted_client_cert: Path
    untrusted_client_key: Path


def _key():
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name: str):
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(subject: str, key, issuer_name, issuer_key, *, ca: bool, sans: list | None = None,
                 client: bool = False, valid_for: datetime.timedelta = datetime.timedelta(days=2)):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID

    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(issuer_name or _name(subject))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + valid_for)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
            decipher_only=False), critical=True)
    else:
        usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(issuer_key or key, hashes.SHA256())


def _pem_key(key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _pem_cert(cert) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return cert.public_bytes(serialization.Encoding.PEM)


def make_tls_files(folder: Path) -> TlsFiles:
    from cryptography import x509

    folder.mkdir(parents=True, exist_ok=True)
    ca_key, other_ca_key = _key(), _key()
    ca = _certificate("console-test-ca", ca_key, None, None, ca=True)
    other_ca = _certificate("someone-elses-ca", other_ca_key, None, None, ca=True)
    broker_key = _key()
    broker = _certificate("localhost", broker_key, ca.subject, ca_key, ca=False, sans=[
        x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    client_key, untrusted_key = _key(), _key()
    client = _certificate("console-client", client_key, ca.subject, ca_key, ca=False, client=True)
    untrusted = _certificate("console-client", untrusted_key, other_ca.subject, other_ca_key, ca=False, client=True)
    files = TlsFiles(
        ca=folder / "ca.pem", broker_keystore=folder / "broker-keystore.pem",
        client_cert=folder / "client.pem", client_key=folder / "client-key.pem",
        untrusted_client_cert=folder / "untrusted-client.pem", untrusted_client_key=folder / "untrusted-client-key.pem",
    )
    files.ca.write_bytes(_pem_cert(ca))
    files.broker_keystore.write_bytes(_pem_key(broker_key) + _pem_cert(broker) + _pem_cert(ca))
    files.client_cert.write_bytes(_pem_cert(client))
    files.client_key.write_bytes(_pem_key(client_key))
    files.untrusted_client_cert.write_bytes(_pem_cert(untrusted))
    files.untrusted_client_key.write_bytes(_pem_key(untrusted_key))
    for path in (files.broker_keystore, files.client_key, files.untrusted_client_key):
        path.chmod(0o600)
    return files
