"""Writes: a cluster's metrics source (audited), and the `local` cluster's, seeded on every migrate; cordoning and
uncordoning a broker's log directories (audited, checked by the broker first)."""

from __future__ import annotations

import time

from django.conf import settings
from django.utils import timezone

from brokers import conf
from brokers.endpoints import check_ca_file, check_password_env, parse_jmx_spec
from brokers.log_dirs import CONFIG, BrokerLogDirs, CordonPlan, broker_log_dirs, plan_cordon
from brokers.models import MetricsSource
from console.audit.actor import Actor
from console.audit.guarded import refuse_if
from console.audit.services import audited
from console.clusters.selectors import cluster_admin, cluster_get
from console.errors import ConsoleError
from gateway.kafka.errors import InvalidRequest
from gateway.kafka.prometheus import check_prometheus_url
from gateway.kafka.types import BROKER

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


MSG_BROKER_REFUSES = "Broker {broker} refuses this: {reason}"
MSG_MOVED = ("Broker {broker}'s cordoned.log.dirs is now {now!r}, not {seen!r} as the preview showed: someone changed "
             "it meanwhile; preview again.")
READ_BACK_S = 10.0


def log_dirs_preview(*, cluster: str, broker_id: int, log_dirs: list[str], cordon: bool) -> CordonPlan:
    """What cordoning (or uncordoning) these directories of the broker would change; changes nothing. The broker
    checks the new value first (validate_only), so an entry it refuses is refused here, in its words, at the field."""
    return _checked_plan(cluster, broker_id, log_dirs, cordon)[1]


def _checked_plan(cluster: str, broker_id: int, log_dirs: list[str],
                  cordon: bool) -> tuple[BrokerLogDirs, CordonPlan]:
    state = broker_log_dirs(cluster, broker_id)
    plan = plan_cordon(state, log_dirs, cordon=cordon)
    _alter_cordoned(cluster, plan, validate_only=True)
    return state, plan


def broker_log_dir_cordon(*, actor: Actor, cluster: str, broker_id: int, log_dirs: list[str], reason: str = "",
                          expected_before: str | None = None) -> dict:
    """Cordons log directories of one broker (paths of its log.dirs, or "*" for all): the controller places no new
    replica there; the replicas they hold stay and are served. `expected_before`: the cordoned.log.dirs value the
    preview showed; the change is refused when it moved since. Returns the plan with what the broker reports after."""
    return _log_dirs_change(actor=actor, cluster=cluster, broker_id=broker_id, log_dirs=log_dirs, cordon=True,
                            reason=reason, expected_before=expected_before)


def broker_log_dir_uncordon(*, actor: Actor, cluster: str, broker_id: int, log_dirs: list[str], reason: str = "",
                            expected_before: str | None = None) -> dict:
    """Uncordons log directories of one broker ("*": all): new replicas may be placed there again."""
    return _log_dirs_change(actor=actor, cluster=cluster, broker_id=broker_id, log_dirs=log_dirs, cordon=False,
                            reason=reason, expected_before=expected_before)


def _log_dirs_change(*, actor: Actor, cluster: str, broker_id: int, log_dirs: list[str], cordon: bool, reason: str,
                     expected_before: str | None) -> dict:
    state, plan = _checked_plan(cluster, broker_id, log_dirs, cordon)
    action, target = f"broker.log_dir.{plan.what}", f"broker:{broker_id}"
    params = {"log_dirs": log_dirs, **plan.as_dict()}
    moved = expected_before is not None and expected_before != plan.before
    refuse_if(MSG_MOVED.format(broker=broker_id, now=plan.before, seen=expected_before) if moved else "",
              actor=actor, action=action, cluster=cluster, target=target, reason=reason, params=params)
    with audited(actor=actor, action=action, cluster=cluster, target=target, reason=reason, params=params,
                 before={CONFIG: state.config, "cordoned": state.cordoned}) as record:
        _alter_cordoned(cluster, plan)
        record.after = _read_back(cluster, plan)
    return {**plan.as_dict(), "now": record.after}


def _alter_cordoned(cluster: str, plan: CordonPlan, *, validate_only: bool = False) -> None:
    """Sets cordoned.log.dirs on the broker, or removes the override when the new value is what the broker has
    without one (its static setting or Kafka's default), so that a later change of that setting is not masked."""
    admin = cluster_admin(cluster)
    try:
        admin.alter_configs(BROKER, str(plan.broker), set_values={} if plan.remove_override else {CONFIG: plan.after},
                            delete=[CONFIG] if plan.remove_override else [], validate_only=validate_only)
    except InvalidRequest as exc:
        raise ConsoleError(MSG_BROKER_REFUSES.format(broker=plan.broker, reason=exc.message), field="log_dirs") from exc


def _read_back(cluster: str, plan: CordonPlan) -> dict:
    """What the broker reports once the change shows in DescribeLogDirs (it applies it from the metadata log a
    moment after acknowledging), or after READ_BACK_S: the config and the directories cordoned."""
    wanted = {d.path: plan.cordon for d in plan.affected}
    deadline = time.monotonic() + READ_BACK_S
    while True:
        state = broker_log_dirs(cluster, plan.broker)
        shown = {d.path: d.cordoned for d in state.dirs if d.path in wanted}
        if shown == wanted or time.monotonic() > deadline:
            return {CONFIG: state.config, "cordoned": state.cordoned}
        time.sleep(0.2)
