"""Writes: a cluster's metrics source (audited), and the `local` cluster's, seeded on every migrate."""

from __future__ import annotations

from django.conf import settings
from django.utils import timezone

from brokers import conf
from brokers.endpoints import check_ca_file, check_password_env, parse_jmx_spec
from brokers.models import MetricsSource
from console.audit.actor import Actor
from console.audit.services import audited
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from gateway.kafka.errors import InvalidRequest
from gateway.kafka.prometheus import check_prometheus_url

MSG_KIND = "A metrics source is 'jmx' or 'prometheus', not {kind!r}."
MSG_NO_URL = "A Prometheus source needs the server's address (http(s)://host:port)."
MSG_URL_WITH_JMX = "A JMX source takes no Prometheus address."
MSG_CA_WITHOUT_TLS = "A CA file is for JMX agents over TLS (--tls)."
MSG_USERNAME = "A JMX user name is letters, digits and . _ - (up to 100), or empty for an agent without passwords."
MSG_PASSWORD_WITHOUT_USER = "A JMX password variable needs a user name (--username)."


def _shown(source: MetricsSource | None) -> dict | None:
    if source is None:
        return None
    return {"kind": source.kind, "prometheus_url": source.prometheus_url, "jmx": source.jmx, "username": source.username, "password_env": source.password_env,
            "tls": source.tls, "ca_file": source.ca_file, "enabled": source.enabled}


def metrics_source_set(*, actor: Actor, cluster: str, jmx: str, username: str = "", password_env: str = "",
                       tls: bool = False, enabled: bool = True, reason: str = "", kind: str = MetricsSource.JMX,
                       prometheus_url: str = "", ca_file: str = "") -> MetricsSource:
    """Sets where the sampler reads the cluster's broker metrics: each broker's JMX agent, or a Prometheus server
    (`prometheus_url`) with `jmx` naming each broker's exporter as Prometheus scrapes it. Checked before anything
    is stored: the addresses and their hosts, the Prometheus address, the user name, and that the password's
    variable is one meant for cluster secrets (its value is never stored; the audit row names the variable only)."""
    cluster_get(cluster)
    if kind not in (MetricsSource.JMX, MetricsSource.PROMETHEUS):
        raise ConsoleError(MSG_KIND.format(kind=kind))
    if kind == MetricsSource.PROMETHEUS:
        if not prometheus_url.strip():
            raise ConsoleError(MSG_NO_URL)
        try:
            prometheus_url = check_prometheus_url(prometheus_url)
        except InvalidRequest as exc:
            raise ConsoleError(exc.message) from exc
    elif prometheus_url.strip():
        raise ConsoleError(MSG_URL_WITH_JMX)
    parse_jmx_spec(jmx)
    if ca_file and not (tls and kind == MetricsSource.JMX):
        raise ConsoleError(MSG_CA_WITHOUT_TLS)
    check_ca_file(ca_file)
    if username and (len(username) > 100 or not all(c.isalnum() or c in "._-" for c in username)):
        raise ConsoleError(MSG_USERNAME)
    if password_env and not username:
        raise ConsoleError(MSG_PASSWORD_WITHOUT_USER)
    check_password_env(password_env)
    existing = MetricsSource.objects.filter(cluster=cluster).first()
    wanted = {"kind": kind, "prometheus_url": prometheus_url, "jmx": jmx.strip(), "username": username,
              "password_env": password_env, "tls": tls and kind == MetricsSource.JMX, "ca_file": ca_file,
              "enabled": enabled}
    with audited(actor=actor, action="brokers.metrics_source.set", cluster=cluster, target=f"cluster:{cluster}",
                 reason=reason, params=wanted, before=_shown(existing)) as record:
        source, _ = MetricsSource.objects.update_or_create(
            cluster=cluster, defaults={**wanted, "updated_by": actor.name, "updated_at": timezone.now()})
        record.after = _shown(source)
    return source


def metrics_source_seed_local(*, using: str = "default") -> None:
    """The `local` cluster reads `make run`'s brokers' JMX, with the password `make` wrote to .env, unless someone set
    its source otherwise (a source seeded before the brokers asked for a password gets the user and variable)."""
    spec = conf.local_jmx()
    username, password_env = conf.local_jmx_credentials()
    sources = MetricsSource.objects.using(using)
    seeded = sources.filter(cluster=settings.KAFKA_LOCAL_CLUSTER_NAME).first()
    if spec and seeded is None:
        sources.create(cluster=settings.KAFKA_LOCAL_CLUSTER_NAME, jmx=spec, username=username,
                       password_env=password_env, updated_by="migrate")
    elif seeded is not None and seeded.updated_by == "migrate" and username and not seeded.username:
        sources.filter(pk=seeded.pk).update(username=username, password_env=password_env)
