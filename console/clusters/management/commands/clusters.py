import json

from django.core.management.base import CommandError

from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from console.clusters.models import Cluster
from console.clusters.dependents import cluster_data_counts
from console.clusters.selectors import cluster_get, clusters_health, clusters_json
from console.clusters.services import MSG_REMOVAL_KEEPS, cluster_register, cluster_remove
from console.errors import ConsoleError
from gateway.kafka.sandbox import stop_host_processes
from console.parsing import parse_pairs


def _pairs(values: list[str], option: str) -> dict[str, str]:
    try:
        return parse_pairs(values)
    except ValueError as exc:
        raise CommandError(f"{option}: {exc}") from exc


class Command(ActorCommand):
    help = "List registered clusters with their health, or register one (admin)."

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser, cluster=False)  # --name says which cluster: this is the registry
        listing = sub.add_parser("list", help="clusters with reachability, broker count and controller")
        self.add_format_argument(listing, help="table or json")
        add = sub.add_parser("add", help="register or update a cluster")
        add.add_argument("--name", required=True)
        add.add_argument("--bootstrap-servers", required=True)
        add.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                         help="non-secret librdkafka setting, repeatable")
        add.add_argument("--secret-env", action="append", default=[], metavar="KEY=ENV_VAR",
                         help="secret librdkafka setting read from an environment variable, repeatable")
        add.add_argument("--schema-registry", default="", metavar="URL",
                         help="a Confluent-compatible schema registry; its settings as --config/--secret-env "
                              "schema.registry.KEY=...")
        add.add_argument("--description", default="")
        self.add_actor_arguments(add)
        remove = sub.add_parser("remove", help="unregister a cluster and delete what the console kept about it")
        remove.add_argument("--name", required=True)
        self.add_yes_argument(remove, help="remove; without it, only say what would go")
        self.add_actor_arguments(remove)
        sub.add_parser("stop-clients", help="stop this host's Kafka client processes, shared by its web and Celery "
                                            "processes (they stop by themselves after 10 idle minutes; the next "
                                            "request starts a fresh one)")

    def handle(self, *args, **options):
        if options["subcommand"] == "list":
            return self._list(options["format"])
        if options["subcommand"] == "stop-clients":
            return self._stop_clients()
        if options["subcommand"] == "remove":
            return self._remove(options)
        actor, reason = self.acting(options, role=Role.ADMIN)
        try:
            cluster = cluster_register(
                actor=actor, name=options["name"], bootstrap_servers=options["bootstrap_servers"],
                client_config=_pairs(options["config"], "--config"),
                secret_env=_pairs(options["secret_env"], "--secret-env"),
                description=options["description"], schema_registry_url=options["schema_registry"], reason=reason,
            )
        except ConsoleError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"Cluster '{cluster.name}' registered ({cluster.bootstrap_servers}).")

    def _remove(self, options) -> None:
        try:
            cluster_get(options["name"])
        except ConsoleError as exc:
            raise CommandError(exc.message) from exc
        counts = cluster_data_counts(options["name"])
        if not options["yes"]:
            self.stdout.write(f"Removing '{options['name']}' would delete: "
                              + ", ".join(f"{n} {label}" for label, n in counts.items()) + ".")
            self.stdout.write(MSG_REMOVAL_KEEPS)
            self.stdout.write("Run again with --yes to remove it.")
            return
        actor, reason = self.acting(options, role=Role.ADMIN)
        try:
            deleted = cluster_remove(actor=actor, name=options["name"], reason=reason)
        except ConsoleError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"Cluster '{options['name']}' removed; deleted "
                          + ", ".join(f"{n} {label}" for label, n in deleted.items()) + ".")

    def _stop_clients(self) -> None:
        # Nothing on a cluster changes: the processes only hold connections, so nobody's role is asked for.
        stopped = stop_host_processes()
        if stopped:
            self.stdout.write(f"Stopped {len(stopped)} Kafka client process{'es' if len(stopped) != 1 else ''} "
                              f"({', '.join(map(str, sorted(stopped)))}).")
        else:
            self.stdout.write("No Kafka client process was running.")

    def _list(self, fmt: str) -> None:
        health = clusters_health()
        if fmt == "json":
            self.stdout.write(json.dumps(clusters_json(health), indent=2))
            return
        self.stdout.write(f"{'NAME':<20} {'REACHABLE':<10} {'BROKERS':<8} {'CONTROLLER':<10} PROBLEM")
        for h in health:
            self.stdout.write(f"{h.name:<20} {'yes' if h.reachable else 'no':<10} {h.broker_count or '-':<8} "
                              f"{h.controller_id if h.controller_id is not None else '-':<10} {h.error}")
        if not Cluster.objects.exists():
            self.stdout.write("No clusters registered.")
