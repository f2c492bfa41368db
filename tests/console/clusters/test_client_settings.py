"""Cluster registrations carry only allowlisted settings, files from the certificate folders and secrets from
variables meant for clusters: refused on the page and in the shell with nothing stored, refused again when a
connection is built from an older row, and an allowed registration still reaches the real secured broker."""

from __future__ import annotations

import os
import uuid

import pytest
from django.core.management import CommandError, call_command
from hypothesis import given, settings as hypothesis_settings, strategies as st

from console.audit.models import AuditEvent
from console.clusters import client_settings
from console.clusters.client_settings import (
    CLIENT_SETTINGS, MSG_ENV_CONSOLES_OWN, MSG_ENV_NOT_FOR_CLUSTERS, MSG_UNSAFE_CONFIG,
    MSG_VALUE_IS_CONSOLES, SECRET_CONFIG_KEYS, SettingRefused, check_registration,
)
from console.clusters.models import Cluster
from console.clusters.selectors import cluster_admin, cluster_connection
from console.errors import ConsoleError
from gateway.kafka.java import config as java_config
from tests.fixtures.secured_kafka import SECURED_PASSWORD_ENV, TEST_CERT_DIR, secured_settings

PASSWORD = {"sasl.password": "CONSOLE_SECRET_PROD_KAFKA_PASSWORD"}


def _refusal(client_config: dict, secret_env: dict | None = None) -> SettingRefused:
    with pytest.raises(SettingRefused) as refused:
        check_registration(client_config, secret_env or {})
    return refused.value


# -- the rules, without a broker ---------------------------------------------------------------------------------

def test_a_usual_sasl_registration_passes():
    check_registration({"security.protocol": "sasl_ssl", "sasl.mechanism": "SCRAM-SHA-512",
                        "sasl.username": "console", "client.id": "kafka-console", "socket.timeout.ms": "5000",
                        "broker.address.family": "v4", "api.version.request": True}, PASSWORD)


@pytest.mark.parametrize("key", ["ssl.providers", "plugin.library.paths", "sasl.kerberos.kinit.cmd",
                                 "ssl.engine.location", "ssl.engine.id", "interceptors", "oauth_cb",
                                 "schema.registry.bearer.auth.custom.provider.function"])
def test_settings_that_load_code_are_refused_as_such(key):
    refused = _refusal({key: "/tmp/evil.so"})
    assert refused.message == MSG_UNSAFE_CONFIG.format(key=key)


@pytest.mark.parametrize("env_name", ["SECRET_KEY", "AUDIT_HASH_KEY", "DATABASE_URL", "REDIS_URL", "REDIS_PASSWORD",
                                      "CELERY_BROKER_URL",
                                      "OIDC_RP_CLIENT_SECRET", "CONSOLE_METRICS_TOKEN", "REPLAY_S3_SECRET_KEY"])
def test_the_consoles_own_variables_are_refused_even_when_allowed_or_prefixed(env_name, settings):
    settings.CONSOLE_SECRET_ENV_ALLOW = [env_name]
    settings.CONSOLE_SECRET_ENV_PREFIX = env_name[:3]
    refused = _refusal({}, {"sasl.password": env_name})
    assert (refused.field, refused.message) == (
        "secret_env", MSG_ENV_CONSOLES_OWN.format(env=env_name, key="sasl.password"))


def test_other_variables_need_the_prefix_or_the_allow_setting(settings):
    refused = _refusal({}, {"sasl.password": "PROD_KAFKA_PASSWORD"})
    assert refused.message == MSG_ENV_NOT_FOR_CLUSTERS.format(env="PROD_KAFKA_PASSWORD", key="sasl.password",
                                                              prefix="CONSOLE_SECRET_")
    settings.CONSOLE_SECRET_ENV_ALLOW = ["PROD_KAFKA_PASSWORD"]
    check_registration({}, {"sasl.password": "PROD_KAFKA_PASSWORD"})
    settings.CONSOLE_SECRET_ENV_PREFIX = ""  # an empty prefix allows nothing by itself
    assert _refusal({}, PASSWORD).field == "secret_env"


def test_secrets_only_in_secret_env_and_plain_settings_only_in_client_config():
    assert _refusal({"sasl.password": "hunter2"}).message.startswith("'sasl.password' is a secret")
    assert _refusal({}, {"sasl.username": "CONSOLE_SECRET_USER"}).message.startswith("'sasl.username' is not a secret")


@pytest.mark.parametrize("key, value", [("security.protocol", "TLS"), ("sasl.mechanism", "GSSAPI"),
                                        ("sasl.mechanism", "scram-sha-512"), ("socket.timeout.ms", "5s"),
                                        ("api.version.request", "yes"), ("client.id", "a b"),
                                        ("ssl.endpoint.identification.algorithm", "http")])
def test_values_of_enumerated_and_typed_settings_are_checked(key, value):
    assert _refusal({key: value}).message.startswith(f"'{key}' must be ")


def test_files_must_resolve_inside_the_certificate_folders(tmp_path, settings):
    certs, outside = tmp_path / "certs", tmp_path / "elsewhere"
    certs.mkdir(), outside.mkdir()
    settings.CONSOLE_CLUSTER_CERT_DIRS = [str(certs)]
    (certs / "ca.pem").write_text("CA")
    (certs / "escape.pem").symlink_to(outside / "secret.pem")
    (certs / "inner").symlink_to(certs / "ca.pem")

    check_registration({"ssl.ca.location": str(certs / "ca.pem"),
                        "schema.registry.ssl.ca.location": str(certs / "inner")}, {})
    for path in (str(outside / "ca.pem"), str(certs / "escape.pem"), str(certs / ".." / "elsewhere" / "ca.pem"),
                 "/etc/passwd", "ca.pem", "probe", str(certs) + "2/ca.pem"):
        assert _refusal({"ssl.key.location": path}).message.startswith("'ssl.key.location' "), path


@hypothesis_settings(max_examples=300, deadline=None)
@given(key=st.text(max_size=60), value=st.text(max_size=20))
def test_any_key_not_on_the_list_is_refused(key, value):
    if key in CLIENT_SETTINGS or key in SECRET_CONFIG_KEYS:
        return
    refused = _refusal({key: value})
    assert refused.field == "client_config" and f"'{key}'" in refused.message
    refused = _refusal({}, {key: "CONSOLE_SECRET_X"})
    assert refused.field == "secret_env" and f"'{key}'" in refused.message


@hypothesis_settings(max_examples=200, deadline=None)
@given(key=st.sampled_from(sorted(CLIENT_SETTINGS)), value=st.text(min_size=1, max_size=40))
def test_a_value_that_passes_has_no_control_characters(key, value):
    try:
        check_registration({key: value}, {})
    except SettingRefused:
        return
    assert not any(ord(ch) < 32 for ch in value)


def test_what_java_clients_are_given_is_on_the_list():
    assert java_config._SAME <= set(CLIENT_SETTINGS) | SECRET_CONFIG_KEYS
    assert not [key for key in CLIENT_SETTINGS if key.startswith(("sasl.kerberos", "sasl.oauthbearer", "ssl.engine"))]


# -- the page and the shell -------------------------------------------------------------------------------------

def _form(name: str, **extra) -> dict:
    return {"name": name, "bootstrap_servers": "127.0.0.1:1", "client_config": "", "secret_env": "",
            "description": "", "schema_registry_url": "", "reason": "registration rules", **extra}


REFUSED = [
    ({"secret_env": "sasl.password=SECRET_KEY"}, ["--secret-env", "sasl.password=SECRET_KEY"], "SECRET_KEY"),
    ({"secret_env": "sasl.password=DATABASE_URL"}, ["--secret-env", "sasl.password=DATABASE_URL"], "DATABASE_URL"),
    ({"client_config": "ssl.providers=/tmp/evil"}, ["--config", "ssl.providers=/tmp/evil"], "ssl.providers"),
    ({"client_config": "ssl.ca.location=/etc/ssl/private/key.pem"},
     ["--config", "ssl.ca.location=/etc/ssl/private/key.pem"], "CONSOLE_CLUSTER_CERT_DIRS"),
]


@pytest.mark.parametrize("form, _, named", REFUSED)
def test_the_page_refuses_and_stores_nothing(form, _, named, client_for, admin):
    name = f"page-{uuid.uuid4().hex[:6]}"

    response = client_for(admin).post("/clusters/new/", _form(name, **form), HTTP_HX_REQUEST="true")

    assert response.status_code == 400 and named in response.content.decode()
    assert not Cluster.objects.filter(name=name).exists()
    assert not AuditEvent.objects.filter(target=f"cluster:{name}").exists()


@pytest.mark.parametrize("_, options, named", REFUSED)
def test_the_shell_refuses_and_stores_nothing(_, options, named, admin):
    name = f"shell-{uuid.uuid4().hex[:6]}"

    with pytest.raises(CommandError, match=named):
        call_command("clusters", "add", "--name", name, "--bootstrap-servers", "127.0.0.1:1", *options,
                     "--actor", admin.username, "--reason", "registration rules")

    assert not Cluster.objects.filter(name=name).exists()
    assert not AuditEvent.objects.filter(target=f"cluster:{name}").exists()


def test_an_edit_that_adds_a_consoles_secret_is_refused_and_keeps_the_old_settings(client_for, admin, kafka_node):
    client = client_for(admin)
    assert client.post("/clusters/new/", _form("kept-safe", bootstrap_servers=kafka_node.bootstrap)).status_code == 302

    response = client.post("/clusters/kept-safe/edit/", _form("kept-safe", secret_env="sasl.password=SECRET_KEY"),
                           HTTP_HX_REQUEST="true")

    assert response.status_code == 400
    cluster = Cluster.objects.get(name="kept-safe")
    assert cluster.secret_env == {} and cluster.bootstrap_servers == kafka_node.bootstrap
    assert AuditEvent.objects.filter(target="cluster:kept-safe", outcome="success").count() == 1


@pytest.mark.django_db
def test_a_row_stored_before_the_rules_is_refused_when_connecting(client_for, viewer):
    Cluster.objects.create(name="older", bootstrap_servers="127.0.0.1:1", secret_env={"sasl.password": "SECRET_KEY"})

    with pytest.raises(ConsoleError, match="SECRET_KEY") as refused:
        cluster_connection(Cluster.objects.get(name="older"))
    response = client_for(viewer).get("/clusters/older/")

    assert "An admin must edit its registration" in refused.value.message
    assert response.status_code == 400 and "never sent to a cluster" in response.content.decode()


@pytest.mark.django_db
def test_a_variable_holding_a_copy_of_the_consoles_secret_is_refused(monkeypatch, settings):
    monkeypatch.setenv("CONSOLE_SECRET_COPIED", settings.SECRET_KEY)
    cluster = Cluster.objects.create(name="copied", bootstrap_servers="127.0.0.1:1",
                                     secret_env={"sasl.password": "CONSOLE_SECRET_COPIED"})

    with pytest.raises(ConsoleError) as refused:
        cluster_connection(cluster)

    assert MSG_VALUE_IS_CONSOLES.format(env="CONSOLE_SECRET_COPIED", key="sasl.password") in refused.value.message
    assert settings.SECRET_KEY not in refused.value.message


@pytest.mark.django_db
def test_a_certificate_link_moved_outside_after_registration_is_refused_when_connecting(tmp_path, settings):
    certs = tmp_path / "certs"
    certs.mkdir()
    settings.CONSOLE_CLUSTER_CERT_DIRS = [str(certs)]
    (certs / "real.pem").write_text("CA")
    (certs / "ca.pem").symlink_to(certs / "real.pem")
    settings_ = {"security.protocol": "SSL", "ssl.ca.location": str(certs / "ca.pem")}
    cluster = Cluster.objects.create(name="moved", bootstrap_servers="127.0.0.1:1", client_config=settings_)
    cluster.full_clean()
    assert cluster_connection(cluster).config["ssl.ca.location"] == str(certs / "ca.pem")

    (certs / "ca.pem").unlink()
    (certs / "ca.pem").symlink_to("/etc/hostname")

    with pytest.raises(ConsoleError, match="outside the folders"):
        cluster_connection(cluster)


@pytest.mark.kafka
@pytest.mark.django_db
def test_allowed_registrations_still_reach_the_secured_broker(secured_kafka, client_for, admin):
    sasl = secured_settings(secured_kafka)
    assert sasl["secret_env"] == {"sasl.password": SECURED_PASSWORD_ENV}
    assert str(secured_kafka.security.tls.ca).startswith(str(TEST_CERT_DIR))
    client = client_for(admin)
    response = client.post("/clusters/new/", _form(
        "allowed-sasl", bootstrap_servers=sasl["bootstrap_servers"],
        client_config="\n".join(f"{k}={v}" for k, v in sasl["client_config"].items()),
        secret_env=f"sasl.password={SECURED_PASSWORD_ENV}"))
    assert response.status_code == 302, response.content.decode()[:500]

    mtls = secured_settings(secured_kafka, listener="mtls")
    call_command("clusters", "add", "--name", "allowed-mtls", "--bootstrap-servers", mtls["bootstrap_servers"],
                 *[arg for k, v in mtls["client_config"].items() for arg in ("--config", f"{k}={v}")],
                 "--actor", admin.username, "--reason", "registration rules")

    for name in ("allowed-sasl", "allowed-mtls"):
        assert cluster_admin(name).describe_cluster().broker_count == 1
        assert AuditEvent.objects.filter(target=f"cluster:{name}", outcome="success").count() == 1
    assert client.get("/clusters/allowed-sasl/").status_code == 200
    assert os.environ[SECURED_PASSWORD_ENV] not in str(Cluster.objects.get(name="allowed-sasl").secret_env)
    assert str(TEST_CERT_DIR) in client_settings.cert_dirs()
