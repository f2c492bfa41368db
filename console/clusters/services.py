from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from console.audit.actor import Actor
from console.audit.services import audited
from console.clusters.client_settings import REGISTRY_PREFIX
from console.clusters.dependents import cluster_data_counts, cluster_data_delete
from console.clusters.models import Cluster
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError


def cluster_seed_local(*, using: str = "default") -> None:
    """Keeps the `local` cluster pointing at KAFKA_BOOTSTRAP_SERVERS (and SCHEMA_REGISTRY_URL when that is set, with
    the client certificate a registry asking for one takes: SCHEMA_REGISTRY_CA, _CLIENT_CERT, _CLIENT_KEY); runs
    after every migrate."""
    name, servers = settings.KAFKA_LOCAL_CLUSTER_NAME, settings.KAFKA_BOOTSTRAP_SERVERS
    registry = settings.SCHEMA_REGISTRY_URL
    tls = {f"{REGISTRY_PREFIX}{key}": path for key, path in (
        ("ssl.ca.location", settings.SCHEMA_REGISTRY_CA),
        ("ssl.certificate.location", settings.SCHEMA_REGISTRY_CLIENT_CERT),
        ("ssl.key.location", settings.SCHEMA_REGISTRY_CLIENT_KEY)) if registry and path}
    cluster, created = Cluster.objects.using(using).get_or_create(
        name=name, defaults={"bootstrap_servers": servers, "description": "Seeded from KAFKA_BOOTSTRAP_SERVERS",
                             "schema_registry_url": registry, "client_config": tls})
    changes = {"bootstrap_servers": servers} if cluster.bootstrap_servers != servers else {}
    if registry and cluster.schema_registry_url != registry:
        changes["schema_registry_url"] = registry
    if tls and any(cluster.client_config.get(key) != path for key, path in tls.items()):
        changes["client_config"] = {**cluster.client_config, **tls}
    if not created and changes:
        Cluster.objects.using(using).filter(pk=cluster.pk).update(**changes)


def cluster_register(
    *,
    actor: Actor,
    name: str,
    bootstrap_servers: str,
    client_config: dict | None = None,
    secret_env: dict | None = None,
    description: str = "",
    schema_registry_url: str = "",
    reason: str = "",
) -> Cluster:
    """Adds or updates a cluster registration. No secret values: only environment variable names."""
    cluster = Cluster.objects.filter(name=name).first() or Cluster(name=name)
    before = None if cluster.pk is None else _snapshot(cluster)
    cluster.bootstrap_servers = bootstrap_servers
    cluster.client_config = client_config or {}
    cluster.secret_env = secret_env or {}
    cluster.description = description
    cluster.schema_registry_url = schema_registry_url
    try:
        cluster.full_clean()
    except ValidationError as exc:
        raise ConsoleError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from exc
    with audited(actor=actor, action="cluster.register", cluster=name, target=f"cluster:{name}", reason=reason,
                 params=_snapshot(cluster), before=before) as record:
        cluster.save()
        record.after = _snapshot(cluster)
    return cluster


MSG_NAME_TAKEN = "A cluster named '{name}' is registered already; edit it instead."


def cluster_exists(name: str) -> bool:
    return Cluster.objects.filter(name=name).exists()


MSG_REMOVAL_KEEPS = ("Audit events and replay jobs that name the cluster are kept; the cluster's own "
                     "Kafka data is untouched.")
MSG_CONFIRM_NAME = "Type the cluster's name to confirm its removal."


def cluster_remove(*, actor: Actor, name: str, reason: str = "") -> dict[str, int]:
    """Unregisters a cluster and deletes what the console kept about it (history, lag samples, recorder state).
    Kafka itself is not touched; audit events stay. Every process notices on its next look at the registry."""
    cluster = cluster_get(name)
    counts = cluster_data_counts(name)
    with audited(actor=actor, action="cluster.remove", cluster=name, target=f"cluster:{name}", reason=reason,
                 params={"deletes": counts}, before=_snapshot(cluster)) as record:
        with transaction.atomic():
            cluster.delete()
            deleted = cluster_data_delete(name)
        record.after = {"deleted": deleted}
    return deleted


def _snapshot(cluster: Cluster) -> dict:
    return {"bootstrap_servers": cluster.bootstrap_servers, "client_config": cluster.client_config,
            "secret_env": cluster.secret_env, "description": cluster.description,
            "schema_registry_url": cluster.schema_registry_url}
