"""Broker metrics from the shell: `metrics` reads every broker's figures now (JMX, or Prometheus) (the dump an on-call engineer reaches for),
or with --since/--until the stored history; `source` sets where a cluster's metrics come from. A broker's log
directories: `log-dirs` lists them (cordoned or not, what they hold); `cordon` and `uncordon` change which take new
replicas (Kafka 4.3, KIP-1066; admin, previewed without --yes, audited)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

from django.core.management.base import CommandError

from brokers.log_dirs import broker_log_dirs
from brokers.selectors import FIGURES, brokers_read_now, metrics_history
from brokers.serializers import log_dirs_json
from brokers.services import (broker_log_dir_cordon, broker_log_dir_uncordon, log_dirs_preview,
                              metrics_source_set)
from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.times import TimeTextError, parse_time_ms

MSG_WHEN = "--since and --until take an ISO 8601 time with its zone (2026-11-26T10:00:00Z) or an age (90s, 15m, 6h, 2d)."
_AGE = re.compile(r"^(\d+)([smhd])$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_when(text: str, now: datetime) -> datetime:
    """An ISO 8601 time with its zone, or an age before `now` such as 15m."""
    if m := _AGE.match(text.strip()):
        return now - timedelta(seconds=int(m[1]) * _UNIT_S[m[2]])
    if not re.search(r"(Z|[+-]\d{2}:?\d{2})$", text.strip()):
        raise CommandError(MSG_WHEN)
    try:
        return datetime.fromtimestamp(parse_time_ms(text) / 1000, UTC)
    except TimeTextError as exc:
        raise CommandError(MSG_WHEN) from exc


class Command(ActorCommand):
    help = __doc__

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser)
        metrics = sub.add_parser("metrics", help="every broker's figures now (from its source), or stored with --since/--until")
        metrics.add_argument("--broker", type=int, help="one broker's id")
        metrics.add_argument("--topics", action="store_true", help="also each topic's figures on each broker")
        metrics.add_argument("--attributes", action="store_true",
                             help="every MBean attribute read, as Kafka's JmxTool prints them (name:attribute=value)")
        metrics.add_argument("--since", help="stored history from then (ISO time with zone, or an age: 15m, 6h)")
        metrics.add_argument("--until", help="stored history up to then (default: now)")
        metrics.add_argument("--topic", default="", help="with --since: this topic's history instead of the broker's")
        self.add_format_argument(metrics, help="table or json")
        source = sub.add_parser("source", help="set where the cluster's broker metrics come from (JMX or Prometheus)")
        where = source.add_mutually_exclusive_group(required=True)
        where.add_argument("--jmx", help="each broker's JMX agent: '+10000' (each broker's Kafka port plus 10000), "
                                         "':9999' (that port on each broker's host) or '1=host:port,2=host:port'")
        where.add_argument("--exporters", help="with --prometheus: each broker's JMX exporter agent as Prometheus "
                                               "scrapes it, written as for --jmx")
        source.add_argument("--prometheus", default="", help="a Prometheus server's address (http(s)://host:port) "
                                                              "that scrapes the brokers' JMX exporter agents")
        source.add_argument("--username", default="",
                            help="the JMX agent's user (read-only is enough), or Prometheus's basic-auth user")
        source.add_argument("--password-env", default="",
                            help="the environment variable holding its password (CONSOLE_SECRET_... as for clusters)")
        source.add_argument("--tls", action="store_true", help="the agent and its registry use TLS")
        source.add_argument("--ca-file", default="", help="with --tls: a PEM file of the CA the agents' certificates "
                                                          "are checked against, inside CONSOLE_CLUSTER_CERT_DIRS")
        source.add_argument("--disable", action="store_true", help="stop sampling this cluster")
        self.add_actor_arguments(source, required=True)
        log_dirs = sub.add_parser("log-dirs", help="a broker's log directories: cordoned or not, replicas, bytes")
        log_dirs.add_argument("--broker", type=int, required=True, help="the broker's id")
        self.add_format_argument(log_dirs, help="table or json")
        for name, what in (("cordon", "place no new replica in"), ("uncordon", "let new replicas go to")):
            change = sub.add_parser(name, help=f"{what} log directories of a broker (admin; Kafka 4.3)")
            change.add_argument("--broker", type=int, required=True, help="the broker's id")
            change.add_argument("--log-dir", action="append", required=True, dest="log_dir",
                                help="a directory of the broker's log.dirs (repeatable), or '*' for all of them")
            self.add_yes_argument(change, help="do it; without --yes only the preview prints")
            self.add_format_argument(change, help="table or json")
            self.add_actor_arguments(change, required=False)

    def handle(self, *args, **options):
        try:
            getattr(self, "_" + options["subcommand"].replace("-", "_"))(options)
        except ConsoleError as exc:
            raise CommandError(exc.message) from exc

    def _source(self, options):
        actor, reason = self.acting(options, role=Role.ADMIN, reason_required=False)
        if bool(options["exporters"]) != bool(options["prometheus"]):
            raise CommandError("--exporters and --prometheus go together: Prometheus's address, and each broker's "
                               "exporter as it scrapes them.")
        if options["prometheus"] and options["tls"]:
            raise CommandError("--tls is for a JMX agent; a Prometheus address says https:// itself.")
        prometheus = bool(options["prometheus"])
        source = metrics_source_set(actor=actor, cluster=options["cluster"],
                                    jmx=options["exporters"] if prometheus else options["jmx"],
                                    kind="prometheus" if prometheus else "jmx", prometheus_url=options["prometheus"],
                                    username=options["username"], password_env=options["password_env"],
                                    tls=options["tls"], ca_file=options["ca_file"], enabled=not options["disable"],
                                    reason=reason)
        where = (f"Prometheus {source.prometheus_url} (exporters {source.jmx})" if prometheus
                 else f"JMX {source.jmx}")
        self.stdout.write(f"Cluster {source.cluster}: broker metrics from {where}"
                          f"{' as ' + source.username if source.username else ''}{' over TLS' if source.tls else ''}"
                          f"{'' if source.enabled else ' (sampling off)'}.")

    def _metrics(self, options):
        cluster_get(options["cluster"])
        if options["since"] or options["until"]:
            return self._history(options)
        readings = brokers_read_now(options["cluster"], broker=options["broker"])
        if options["format"] == "json":
            self.stdout.write(json.dumps([{
                "broker": r.broker, "address": r.address, "jmx": r.address,
                "time": datetime.fromtimestamp(r.read_at, UTC).isoformat().replace("+00:00", "Z"),
                "error": r.error or None, "figures": {**r.gauges, **{k: m.one_minute_rate for k, m in r.meters.items()}},
                "counts": {k: m.count for k, m in r.meters.items()},
                **({"topics": {t: {k: {"count": m.count, "one_minute_rate": m.one_minute_rate} for k, m in ms.items()}
                               for t, ms in sorted(r.topics.items())}} if options["topics"] else {}),
                **({"attributes": r.attributes} if options["attributes"] else {})} for r in readings], indent=2))
            return
        for r in readings:
            self.stdout.write(f"broker {r.broker} ({r.address})" + (f": {r.error}" if r.error else ""))
            if options["attributes"]:
                for key, value in sorted(r.attributes.items()):
                    self.stdout.write(f"  {key}={value}")
                continue
            values = {**r.gauges, **{k: m.one_minute_rate for k, m in r.meters.items()}}
            for key, label, unit in FIGURES:
                if key in values:
                    self.stdout.write(f"  {label:<30} {values[key]:>14,.2f} {unit}")
            for topic, meters in sorted(r.topics.items()) if options["topics"] else ():
                shown = ", ".join(f"{k} {m.one_minute_rate:,.1f}/s ({m.count:,})" for k, m in sorted(meters.items()))
                self.stdout.write(f"  topic {topic}: {shown}")
        if not readings:
            self.stdout.write("no broker matched")

    def _history(self, options):
        now = datetime.now(UTC)
        since = parse_when(options["since"], now) if options["since"] else now - timedelta(hours=1)
        until = parse_when(options["until"], now) if options["until"] else now
        if since >= until:
            raise CommandError("--since must be before --until.")
        rows = metrics_history(options["cluster"], broker=options["broker"], since=since, until=until,
                               topic=options["topic"])
        if options["format"] == "json":
            self.stdout.write(json.dumps(rows, indent=2))
            return
        keys = [k for k, _, _ in FIGURES if any(k in r for r in rows)]
        self.stdout.write(f"{'TIME (UTC)':<22} {'BROKER':>6} {'STEP':>5} " + " ".join(f"{k:>16}" for k in keys))
        for r in rows:
            self.stdout.write(f"{r['time'][:19] + 'Z':<22} {r['broker']:>6} {r['step_s']:>5} "
                              + " ".join(f"{r[k]:>16,.2f}" if isinstance(r.get(k), int | float) else f"{'-':>16}"
                                         for k in keys))
        if not rows:
            self.stdout.write("no samples stored in that range")

    def _log_dirs(self, options):
        state = broker_log_dirs(options["cluster"], options["broker"])
        if options["format"] == "json":
            self.stdout.write(json.dumps(log_dirs_json(state), indent=2))
            return
        self.stdout.write(f"Broker {state.broker}: cordoned.log.dirs = {state.config or '(none)'!s}"
                          f"{f' ({state.source})' if state.source else ''}")
        for d in state.dirs:
            what = f"ERROR {d.error}" if d.error else "cordoned" if d.cordoned else "takes new replicas"
            self.stdout.write(f"  {d.path:<40} {what:<20} {d.replicas:>8,} replicas {d.size:>16,} bytes")

    def _cordon(self, options):
        self._cordoning(options, cordon=True)

    def _uncordon(self, options):
        self._cordoning(options, cordon=False)

    def _cordoning(self, options, *, cordon: bool):
        cluster, broker = options["cluster"], options["broker"]
        if not options["yes"]:
            plan = log_dirs_preview(cluster=cluster, broker_id=broker, log_dirs=options["log_dir"], cordon=cordon)
            if options["format"] == "json":
                self.stdout.write(json.dumps({**plan.as_dict(), "preview": True}, indent=2))
                return
            self.stdout.write(f"Would {plan.what} on broker {broker}: cordoned.log.dirs {plan.before or '(none)'!s} -> "
                              f"{plan.after or '(none)'!s}{' (its override removed)' if plan.remove_override else ''}")
            for d in plan.affected:
                self.stdout.write(f"  {d.path}: {d.replicas:,} replicas, {d.size:,} bytes")
            if cordon:
                self.stdout.write("New replicas will not be placed there; the replicas there stay and are served."
                                  + (f" Every directory of broker {broker} is then cordoned: it takes no new replica."
                                     if plan.all_cordoned_after else ""))
            else:
                self.stdout.write("New replicas may be placed there again.")
            self.stdout.write(f"Add --yes (with --actor and --reason) to {plan.what}.")
            return
        actor, reason = self.acting(options, role=Role.ADMIN)
        change = broker_log_dir_cordon if cordon else broker_log_dir_uncordon
        done = change(actor=actor, cluster=cluster, broker_id=broker, log_dirs=options["log_dir"], reason=reason)
        if options["format"] == "json":
            self.stdout.write(json.dumps(done, indent=2))
            return
        self.stdout.write(f"Broker {broker}: cordoned.log.dirs = {done['now']['cordoned.log.dirs'] or '(none)'!s}; "
                          f"cordoned: {', '.join(done['now']['cordoned']) or 'none'}.")

