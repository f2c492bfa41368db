"""Connect clusters registered per Kafka cluster from the shell (admin), the `local` one seeded from CONNECT_URL on
migrate, and names in the console's own URLs."""

from __future__ import annotations

from io import StringIO
from urllib.parse import unquote

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import resolve, reverse
from hypothesis import given, settings as hsettings, strategies as st

from connect.models import ConnectCluster
from connect.registration import connect_endpoint, connect_seed_local
from console.audit.models import AuditEvent
from console.errors import ConsoleError

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command("connect", *args, stdout=out)
    return out.getvalue()


def test_the_shell_registers_changes_and_forgets_a_connect_cluster(local_cluster, admin, operator):
    with pytest.raises(CommandError, match="This needs the admin role"):
        run("register", "dc2", "--url", "http://127.0.0.1:8083", "--actor", operator.username)
    with pytest.raises(CommandError, match="not one meant for cluster secrets"):
        run("register", "dc2", "--url", "http://127.0.0.1:8083", "--username", "u", "--password-env", "HOME",
            "--actor", admin.username)
    assert not ConnectCluster.objects.filter(name="dc2").exists()
    run("register", "dc2", "--url", "http://127.0.0.1:8083", "--username", "u", "--password-env",
        "CONSOLE_SECRET_DC2", "--actor", admin.username)
    assert "CONSOLE_SECRET_DC2" in run("clusters")
    with pytest.raises(ConsoleError, match="needs the environment variable CONSOLE_SECRET_DC2"):
        connect_endpoint(ConnectCluster.objects.get(name="dc2"))
    assert "Would forget" in run("unregister", "dc2", "--actor", admin.username)
    run("unregister", "dc2", "--yes", "--actor", admin.username)
    assert not ConnectCluster.objects.filter(name="dc2").exists()
    actions = list(AuditEvent.objects.filter(outcome="success").values_list("action", flat=True))
    assert sorted(actions) == ["connect.cluster.register", "connect.cluster.remove"]


def test_migrate_seeds_the_local_connect_cluster_from_connect_url(local_cluster, settings):
    settings.CONNECT_URL = "http://127.0.0.1:18083"
    connect_seed_local()
    assert ConnectCluster.objects.get(cluster="local", name="local").url == "http://127.0.0.1:18083"
    settings.CONNECT_URL = "http://127.0.0.1:28083"
    connect_seed_local()
    assert ConnectCluster.objects.get(cluster="local", name="local").url == "http://127.0.0.1:28083"


@given(st.text(min_size=1, max_size=60))
@hsettings(max_examples=150, deadline=None)
def test_any_connector_name_round_trips_through_the_pages_urls(name):
    for route in ("connect:connector", "connect:offsets", "connect:edit"):
        url = reverse(route, args=["local", "local", name])
        assert resolve(unquote(url)).kwargs["name"] == name  # the server decodes the path before Django


@pytest.mark.kafka
def test_a_connect_cluster_registered_with_client_certificates_is_listed(local_cluster, connect_worker, admin,
                                                                         viewer, client_for):
    from tests.fixtures.connect import CONNECT_PASSWORD_ENV, CONNECT_USER

    tls = connect_worker.tls
    run("register", "mtls", "--url", connect_worker.https_url, "--username", CONNECT_USER, "--password-env",
        CONNECT_PASSWORD_ENV, "--ca-file", str(tls.ca), "--cert-file", str(tls.client_cert), "--key-file",
        str(tls.client_key), "--actor", admin.username)
    page = client_for(viewer).get(reverse("connect:list", args=["local"])).content.decode()
    assert connect_worker.https_url in page and "error-box" not in page
