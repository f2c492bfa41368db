from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from django.conf import settings

from console.clusters.client_settings import (REGISTRY_PREFIX, SettingRefused, check_registration, check_secret_value,
                                              setting_text)
from console.clusters.local_processes import local_broker_failure
from console.clusters.models import Cluster
from console.errors import ConsoleError, NotFound
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.isolated import IsolatedKafkaAdmin
from gateway.kafka.errors import KafkaGatewayError, MSG_MISSING_SECRET
from gateway.kafka.types import BACKGROUND, ClusterConnection, ClusterDescription

MSG_UNKNOWN_CLUSTER = "There is no cluster named '{name}'."
MSG_REFUSED_SETTING = "Cluster '{cluster}' is not connected: {reason} An admin must edit its registration."


def cluster_get(name: str) -> Cluster:
    try:
        return Cluster.objects.get(name=name)
    except Cluster.DoesNotExist as exc:
        raise NotFound(MSG_UNKNOWN_CLUSTER.format(name=name)) from exc


def cluster_connection(cluster: Cluster) -> ClusterConnection:
    """Builds the client settings, reading secrets from the environment at the last moment. The registration's
    rules are checked again here: a row stored before they tightened, or a certificate link that moved since it
    was saved, must not reach a client either."""
    try:
        check_registration(cluster.client_config, cluster.secret_env)
    except SettingRefused as exc:
        raise ConsoleError(MSG_REFUSED_SETTING.format(cluster=cluster.name, reason=exc.message)) from exc
    config = {str(k): setting_text(v) for k, v in cluster.client_config.items()}
    for key, env_name in cluster.secret_env.items():
        value = os.environ.get(env_name)
        if value is None:
            raise ConsoleError(MSG_MISSING_SECRET.format(cluster=cluster.name, env=env_name, key=key))
        try:
            check_secret_value(key, env_name, value)
        except SettingRefused as exc:
            raise ConsoleError(MSG_REFUSED_SETTING.format(cluster=cluster.name, reason=exc.message)) from exc
        config[key] = value
    registry = {k.removeprefix(REGISTRY_PREFIX): config.pop(k) for k in list(config) if k.startswith(REGISTRY_PREFIX)}
    return ClusterConnection(name=cluster.name, bootstrap_servers=cluster.bootstrap_servers, config=config,
                             registry_url=cluster.schema_registry_url, registry_config=registry)


def cluster_admin(cluster: Cluster | str) -> IsolatedKafkaAdmin | KafkaAdmin:
    """The cluster's gateway. Each cluster's librdkafka clients run in a child process of their own unless
    KAFKA_CLIENT_ISOLATION is off, so a native abort in the client library stops that cluster's calls only."""
    if isinstance(cluster, str):
        cluster = cluster_get(cluster)
    gateway = IsolatedKafkaAdmin if settings.KAFKA_CLIENT_ISOLATION else KafkaAdmin
    return gateway(
        cluster_connection(cluster),
        timeout=settings.KAFKA_REQUEST_TIMEOUT_S,
        unreachable_backoff=settings.KAFKA_UNREACHABLE_BACKOFF_S,
    )


def patient_admin(admin, timeout: float):
    """The same gateway in the background lane with a longer bound on each call, for the shared tables' rebuilds,
    whose answers grow with the cluster (a page's calls keep KAFKA_REQUEST_TIMEOUT_S)."""
    return type(admin)(replace(admin.connection, lane=BACKGROUND), timeout=timeout,
                       unreachable_backoff=admin.unreachable_backoff)


def background_lane(admin):
    """The same gateway, bound included, through the cluster's background clients (ClusterConnection.lane): for
    work no page waits on, whose big requests must not hold up the pages' small ones."""
    return patient_admin(admin, admin.timeout)


def check_answering(admin) -> None:
    """ClusterUnavailable within a page's bound when the cluster does not answer one small request (it is down,
    refuses connections, or is frozen): a rebuild's long bound is for a big cluster's big answers, not for waiting
    on a cluster that is not there."""
    patient_admin(admin, settings.KAFKA_REQUEST_TIMEOUT_S).describe_cluster()


@dataclass(frozen=True)
class ClusterHealth:
    name: str
    bootstrap_servers: str
    reachable: bool
    description: ClusterDescription | None = None
    error: str = ""

    @property
    def broker_count(self) -> int | None:
        return self.description.broker_count if self.description else None

    @property
    def controller_id(self) -> int | None:
        return self.description.controller_id if self.description else None

    def as_json(self) -> dict:
        """No bootstrap servers or settings: /health is public."""
        return {"reachable": self.reachable, "brokers": self.broker_count, "controller": self.controller_id,
                "error": self.error or None}


def cluster_health(cluster: Cluster) -> ClusterHealth:
    try:
        description = cluster_admin(cluster).describe_cluster()
    except (KafkaGatewayError, ConsoleError) as exc:
        error = local_broker_failure(cluster.name) or exc.message
        return ClusterHealth(cluster.name, cluster.bootstrap_servers, reachable=False, error=error)
    return ClusterHealth(cluster.name, cluster.bootstrap_servers, reachable=True, description=description)


def clusters_health(clusters: list[Cluster] | None = None) -> list[ClusterHealth]:
    """Checks every cluster at once, so one slow cluster does not add up with the others.

    The database is read here, in the caller's thread; the threads only talk to Kafka.
    """
    clusters = list(Cluster.objects.all()) if clusters is None else clusters
    if not clusters:
        return []
    with ThreadPoolExecutor(max_workers=min(32, len(clusters))) as pool:
        return list(pool.map(cluster_health, clusters))


def clusters_json(health: list[ClusterHealth] | None = None) -> list[dict]:
    """What `manage.py clusters list --format json` prints and GET /api/v1/clusters answers: each registered
    cluster's health and its schema registry."""
    health = clusters_health() if health is None else health
    registries = dict(Cluster.objects.values_list("name", "schema_registry_url"))
    return [{"name": h.name, **h.as_json(), "schema_registry": registries.get(h.name) or None} for h in health]
