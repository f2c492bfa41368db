"""`make run`'s schema registry (devstack/schema_registry.py): HTTPS only, and only for a client holding the console's
certificate, which no other user of the host can read (registry_tls.py); the `local` cluster seeded by migrate
reaches it through the console's own registry client. Against a real Apicurio started as `make run` starts it."""

from __future__ import annotations

import http.client
import ssl
import urllib.error
import urllib.request

import pytest

from devstack.kafka import free_ports
from devstack.schema_registry import SchemaRegistry
from devstack.registry_tls import ensure_registry_tls
from devstack.tls import make_tls_files

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tls_registry(tmp_path_factory):
    home = tmp_path_factory.mktemp("registry-tls")
    registry = SchemaRegistry(home=home / "registry", port=free_ports(1)[0], persistent=True,
                              tls=ensure_registry_tls(home / "certs" / "registry"))
    registry.start()
    try:
        registry.wait_ready()
        yield registry
    finally:
        registry.stop()


def _get(url: str, context: ssl.SSLContext | None) -> int:
    with urllib.request.urlopen(f"{url}/subjects", timeout=5, context=context) as response:
        return response.status


def test_no_one_without_the_consoles_certificate_gets_an_answer(tls_registry, tmp_path):
    assert tls_registry.url.startswith("https://127.0.0.1:")
    assert _get(tls_registry.url, tls_registry.client_context()) == 200

    with pytest.raises((ssl.SSLError, urllib.error.URLError, ConnectionError)):
        _get(tls_registry.url, tls_registry.client_context(certificate=False))  # the CA, no certificate
    stranger = make_tls_files(tmp_path / "stranger")  # a certificate of another CA
    other = ssl.create_default_context(cafile=str(tls_registry.tls.ca))
    other.load_cert_chain(str(stranger.untrusted_client_cert), str(stranger.untrusted_client_key))
    with pytest.raises((ssl.SSLError, urllib.error.URLError, ConnectionError)):
        _get(tls_registry.url, other)
    plain = http.client.HTTPConnection("127.0.0.1", tls_registry.port, timeout=5)  # the old http:// address
    with pytest.raises((http.client.HTTPException, ConnectionError)):
        plain.request("GET", "/apis/ccompat/v7/subjects")
        plain.getresponse()


def test_the_consoles_key_and_the_registrys_data_are_the_consoles_only(tls_registry):
    tls = tls_registry.tls
    for path in (tls.client_key, tls.server_key, tls.trust_store_password, tls_registry.home / "tls.properties"):
        assert path.stat().st_mode & 0o777 == 0o600, path
    stored = [p for p in tls_registry.home.rglob("*") if p.is_file()]
    assert any(p.name.startswith("registry_db") for p in stored)
    assert [str(p) for p in stored if p.stat().st_mode & 0o077] == []


def test_the_seeded_cluster_reaches_it_through_the_consoles_registry_client(tls_registry, db, settings):
    from console.clusters.models import Cluster
    from console.clusters.selectors import cluster_connection
    from console.clusters.services import cluster_seed_local
    from gateway.kafka.schema_registry import registry_codec

    tls = tls_registry.tls
    settings.KAFKA_LOCAL_CLUSTER_NAME = "local-tls-registry"
    settings.SCHEMA_REGISTRY_URL = tls_registry.url
    settings.SCHEMA_REGISTRY_CA, settings.SCHEMA_REGISTRY_CLIENT_CERT = str(tls.ca), str(tls.client_cert)
    settings.SCHEMA_REGISTRY_CLIENT_KEY = str(tls.client_key)
    settings.CONSOLE_CLUSTER_CERT_DIRS = [*settings.CONSOLE_CLUSTER_CERT_DIRS, str(tls.folder)]

    cluster_seed_local()

    cluster = Cluster.objects.get(name="local-tls-registry")
    assert cluster.schema_registry_url == tls_registry.url
    assert cluster.client_config["schema.registry.ssl.key.location"] == str(tls.client_key)
    assert registry_codec(cluster_connection(cluster), timeout=10).subjects() == []
