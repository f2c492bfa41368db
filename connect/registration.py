"""Connect clusters registered per Kafka cluster: the services that add, change and remove a registration
(admin, audited), the reads of them, and the gateway built from one (connect_client)."""

from __future__ import annotations

import os

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from connect.endpoint_rules import RegistrationRefused, check_connect_registration
from connect.models import ConnectCluster, ConnectorEvent, ConnectorSnapshot
from connect.operator_rules import FILE_PLUGINS
from console.audit.actor import Actor
from console.audit.services import audited
from console.clusters.client_settings import SettingRefused, check_secret_value
from console.clusters.selectors import cluster_get
from gateway.kafka_connect import ConnectClient, ConnectEndpoint
from console.errors import ConsoleError, NotFound

MSG_UNKNOWN = "Kafka cluster '{cluster}' has no Connect cluster named '{name}'."
MSG_NONE = "Kafka cluster '{cluster}' has no Connect cluster registered."
MSG_TAKEN = "Kafka cluster '{cluster}' has a Connect cluster named '{name}' already; edit it instead."
MSG_MISSING_SECRET = ("Connect cluster '{name}' needs the environment variable {env} (its basic-auth password), "
                      "which this process does not have.")
MSG_REFUSED = "Connect cluster '{name}' is not connected: {reason} An admin must edit its registration."


def connect_clusters(cluster: str) -> list[ConnectCluster]:
    return list(ConnectCluster.objects.filter(cluster=cluster))


def connect_cluster_get(cluster: str, name: str) -> ConnectCluster:
    found = ConnectCluster.objects.filter(cluster=cluster, name=name).first()
    if found is None:
        raise NotFound(MSG_UNKNOWN.format(cluster=cluster, name=name))
    return found


def connect_cluster_only(cluster: str, name: str | None) -> ConnectCluster:
    """`name`'s registration, or the Kafka cluster's only one when no name is given (the shell's default)."""
    if name:
        return connect_cluster_get(cluster, name)
    found = connect_clusters(cluster)
    if not found:
        raise NotFound(MSG_NONE.format(cluster=cluster))
    if len(found) > 1:
        raise ConsoleError(f"Kafka cluster '{cluster}' has several Connect clusters "
                           f"({', '.join(c.name for c in found)}): name one with --connect.")
    return found[0]


def connect_endpoint(registration: ConnectCluster) -> ConnectEndpoint:
    """The registration's rules checked again and its password read from the environment at the last moment, as
    cluster_connection does for a Kafka cluster."""
    try:
        check_connect_registration(url=registration.url, username=registration.username,
                                   password_env=registration.password_env, ca_file=registration.ca_file,
                                   cert_file=registration.cert_file, key_file=registration.key_file)
    except RegistrationRefused as exc:
        raise ConsoleError(MSG_REFUSED.format(name=registration.name, reason=exc.message)) from None
    password = ""
    if registration.password_env:
        password = os.environ.get(registration.password_env)
        if password is None:
            raise ConsoleError(MSG_MISSING_SECRET.format(name=registration.name, env=registration.password_env))
        try:
            check_secret_value("the basic-auth password", registration.password_env, password)
        except SettingRefused as exc:
            raise ConsoleError(MSG_REFUSED.format(name=registration.name, reason=exc.message)) from None
    return ConnectEndpoint(
        name=registration.name, url=registration.url, username=registration.username, password=password,
        ca_file=registration.ca_file, cert_file=registration.cert_file, key_file=registration.key_file,
        timeout=settings.CONNECT_REQUEST_TIMEOUT_S, write_timeout=settings.CONNECT_WRITE_TIMEOUT_S,
        retries=settings.CONNECT_REBALANCE_RETRIES, unreachable_backoff=settings.CONNECT_UNREACHABLE_BACKOFF_S)


def connect_client(registration: ConnectCluster) -> ConnectClient:
    return ConnectClient(connect_endpoint(registration))


def _snapshot(registration: ConnectCluster) -> dict:
    return {"url": registration.url, "username": registration.username, "password_env": registration.password_env,
            "ca_file": registration.ca_file, "cert_file": registration.cert_file, "key_file": registration.key_file,
            "description": registration.description, "operator_plugins": registration.operator_plugins,
            "operator_settings": registration.operator_settings, "file_dirs": registration.file_dirs}


def connect_cluster_register(*, actor: Actor, cluster: str, name: str, url: str, username: str = "",
                             password_env: str = "", ca_file: str = "", cert_file: str = "", key_file: str = "",
                             description: str = "", operator_plugins: list[str] | None = None,
                             operator_settings: list[str] | None = None, file_dirs: list[str] | None = None,
                             reason: str = "", create: bool | None = None) -> ConnectCluster:
    """Adds (create True), changes (create False) or upserts (None) a registration; nothing is stored unless
    every field passes the rules of connect/endpoint_rules.py. No secret values: a variable's name only. The
    operator allowlist (plugins, extra settings, folders for files) is given whole; None leaves it empty."""
    cluster_get(cluster)
    registration = ConnectCluster.objects.filter(cluster=cluster, name=name).first()
    if create is True and registration is not None:
        raise ConsoleError(MSG_TAKEN.format(cluster=cluster, name=name))
    if create is False and registration is None:
        raise NotFound(MSG_UNKNOWN.format(cluster=cluster, name=name))
    registration = registration or ConnectCluster(cluster=cluster, name=name)
    before = None if registration.pk is None else _snapshot(registration)
    registration.url, registration.username, registration.password_env = url.strip(), username, password_env
    registration.ca_file, registration.cert_file, registration.key_file = ca_file, cert_file, key_file
    registration.description = description
    registration.operator_plugins = list(operator_plugins or [])
    registration.operator_settings = list(operator_settings or [])
    registration.file_dirs = list(file_dirs or [])
    try:
        registration.full_clean(validate_constraints=False)
    except ValidationError as exc:
        raise ConsoleError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from exc
    with audited(actor=actor, action="connect.cluster.register", cluster=cluster, target=f"connect:{name}",
                 reason=reason, params=_snapshot(registration), before=before) as record:
        registration.save()
        record.after = _snapshot(registration)
    return registration


def connect_cluster_remove(*, actor: Actor, cluster: str, name: str, reason: str = "") -> None:
    """Unregisters a Connect cluster with what the console saw of its connectors; Connect is not touched."""
    registration = connect_cluster_get(cluster, name)
    with audited(actor=actor, action="connect.cluster.remove", cluster=cluster, target=f"connect:{name}",
                 reason=reason, before=_snapshot(registration)) as record:
        with transaction.atomic():
            for model in (ConnectorSnapshot, ConnectorEvent):
                model.objects.filter(cluster=cluster, connect=name).delete()
            registration.delete()
        record.after = None


def connect_seed_local(*, using: str = "default") -> None:
    """Keeps the `local` Kafka cluster's Connect cluster `local` at CONNECT_URL (make run's worker), with the
    basic-auth user and password variable make run's worker asks for (CONNECT_LOCAL_PASSWORD_ENV, when make starts
    that worker); runs after every migrate. Without CONNECT_URL nothing is registered. A new registration lets
    operators use the FileStream connectors in CONNECT_LOCAL_FILES_DIR only; an existing one keeps the allowlist an
    admin gave it."""
    url = settings.CONNECT_URL
    if not url:
        return
    cluster = settings.KAFKA_LOCAL_CLUSTER_NAME
    password_env = settings.CONNECT_LOCAL_PASSWORD_ENV
    wanted = {"url": url, "username": settings.CONNECT_LOCAL_USER if password_env else "",
              "password_env": password_env}
    existing = ConnectCluster.objects.using(using).filter(cluster=cluster, name="local").first()
    if existing is None:
        ConnectCluster.objects.using(using).create(
            cluster=cluster, name="local", description="Seeded from CONNECT_URL", operator_plugins=sorted(FILE_PLUGINS),
            file_dirs=[str(settings.CONNECT_LOCAL_FILES_DIR)], **wanted)
    elif any(getattr(existing, key) != value for key, value in wanted.items()):
        ConnectCluster.objects.using(using).filter(pk=existing.pk).update(**wanted)
