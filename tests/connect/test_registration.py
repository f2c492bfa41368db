"""Connect clusters registered per Kafka cluster from the shell (admin), the `local` one seeded from CONNECT_URL on
migrate, and names in the console's own URLs."""

from __future__ import annotations

import os
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


def test_migrate_seeds_make_runs_credentials_and_its_allowlist(local_cluster, settings, monkeypatch):
    from connect.operator_rules import FILE_PLUGINS

    settings.CONNECT_URL = "http://127.0.0.1:18083"
    settings.CONNECT_LOCAL_PASSWORD_ENV = "CONSOLE_SECRET_LOCAL_CONNECT_PASSWORD"
    monkeypatch.setenv("CONSOLE_SECRET_LOCAL_CONNECT_PASSWORD", "seeded-password")
    connect_seed_local()
    seeded = ConnectCluster.objects.get(cluster="local", name="local")
    assert (seeded.username, seeded.password_env) == ("console", "CONSOLE_SECRET_LOCAL_CONNECT_PASSWORD")
    assert set(seeded.operator_plugins) == FILE_PLUGINS and seeded.file_dirs == [settings.CONNECT_LOCAL_FILES_DIR]
    endpoint = connect_endpoint(seeded)
    assert (endpoint.username, endpoint.password) == ("console", "seeded-password")
    ConnectCluster.objects.filter(pk=seeded.pk).update(operator_plugins=[], username="", password_env="")
    connect_seed_local()  # the credentials follow make run; the allowlist stays the admin's
    seeded.refresh_from_db()
    assert seeded.password_env == "CONSOLE_SECRET_LOCAL_CONNECT_PASSWORD" and seeded.operator_plugins == []


def test_the_operator_allowlist_is_registered_checked_and_audited(local_cluster, admin, tmp_path, settings):
    from connect.endpoint_rules import MSG_FOLDER_CONSOLE, MSG_PLUGIN_NAME

    base = ["register", "dc3", "--url", "http://127.0.0.1:8083", "--actor", admin.username]
    with pytest.raises(CommandError) as refused:
        run(*base, "--file-dir", str(settings.BASE_DIR / ".data"))
    assert MSG_FOLDER_CONSOLE.format(value=settings.BASE_DIR / ".data", base=os.path.realpath(settings.BASE_DIR),
                                     files=os.path.realpath(settings.CONNECT_LOCAL_FILES_DIR)) in str(refused.value)
    for folder in ("/", "relative/dir", "/tmp/../etc", str(settings.BASE_DIR), "/tmp/x/"):
        with pytest.raises(CommandError):
            run(*base, "--file-dir", folder)
    with pytest.raises(CommandError) as refused:
        run(*base, "--operator-plugin", "not a class")
    assert MSG_PLUGIN_NAME.format(value="not a class") in str(refused.value)
    with pytest.raises(CommandError):
        run(*base, "--operator-setting", "*")
    assert not ConnectCluster.objects.filter(name="dc3").exists()

    run(*base, "--operator-plugin", "org.apache.kafka.connect.file.FileStreamSinkConnector", "--operator-setting",
        "transforms.*", "--file-dir", str(tmp_path), "--file-dir", str(settings.CONNECT_LOCAL_FILES_DIR))
    stored = ConnectCluster.objects.get(name="dc3")
    assert stored.operator_settings == ["transforms.*"]
    assert stored.file_dirs == [str(tmp_path), str(settings.CONNECT_LOCAL_FILES_DIR)]
    event = AuditEvent.objects.get(action="connect.cluster.register", outcome="success")
    assert event.after["operator_plugins"] == ["org.apache.kafka.connect.file.FileStreamSinkConnector"]


def test_the_registration_page_keeps_the_allowlist_one_entry_a_line(local_cluster, admin, client_for, tmp_path):
    web = client_for(admin)
    created = web.post(reverse("connect:register", args=["local"]), {
        "name": "dc4", "url": "http://127.0.0.1:8083", "reason": "r",
        "operator_plugins": "org.apache.kafka.connect.file.FileStreamSinkConnector\n\n",
        "operator_settings": "consumer.override.auto.offset.reset\ntransforms.*", "file_dirs": f" {tmp_path} "})
    assert created.status_code == 302
    stored = ConnectCluster.objects.get(name="dc4")
    assert stored.operator_settings == ["consumer.override.auto.offset.reset", "transforms.*"]
    assert stored.file_dirs == [str(tmp_path)]
    page = web.get(reverse("connect:registration-edit", args=["local", "dc4"])).content.decode()
    assert "consumer.override.auto.offset.reset\ntransforms.*" in page
    refused = web.post(reverse("connect:registration-edit", args=["local", "dc4"]), {
        "url": "http://127.0.0.1:8083", "file_dirs": "/"})
    assert refused.status_code == 400 and ConnectCluster.objects.get(name="dc4").file_dirs == [str(tmp_path)]
