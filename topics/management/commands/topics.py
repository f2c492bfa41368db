"""On-call shell interface to topics, with options in the style of kafka-topics.sh; same services as the pages."""

from __future__ import annotations

import json

from django.core.management.base import CommandError

from changes.actions.topics import CONFIG, DELETE, PURGE, config_kwargs, purge_kwargs
from changes.proposals import propose_if_protected, proposed_output
from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError
from topics import selectors, services
from topics.serializers import purge_rows_json, topic_detail_json, topic_rows_json
from console.parsing import parse_keys, parse_pairs


def _pairs(values: list[str]) -> dict[str, str]:
    try:
        return parse_pairs(values)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc


class Command(ActorCommand):
    help = "Topics: list | describe | create | alter-config | add-partitions | delete | purge"

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser, dest="action")

        def command(name: str, help_text: str, *, mutating: bool, topic: bool = True, actor_required: bool = True):
            p = sub.add_parser(name, help=help_text)
            self.add_format_argument(p)
            if topic:
                p.add_argument("--topic", required=True)
            if mutating:
                self.add_actor_arguments(p, required=actor_required)
            return p

        listing = command("list", "topics with partitions, replication and message counts", mutating=False, topic=False)
        listing.add_argument("--search", default="", help="substring, or a regular expression with --regex")
        listing.add_argument("--regex", action="store_true")
        listing.add_argument("--include-internal", action="store_true")
        command("describe", "partitions with leader, replicas, ISR and offsets; configs with sources", mutating=False)
        create = command("create", "create a topic (validated by the broker first)", mutating=True)
        create.add_argument("--partitions", type=int, required=True)
        create.add_argument("--replication-factor", type=int, default=1)
        create.add_argument("--config", action="append", default=[], metavar="KEY=VALUE")
        alter = command("alter-config", "set or remove topic config overrides", mutating=True)
        alter.add_argument("--add-config", action="append", default=[], metavar="K=V[,K=V]")
        alter.add_argument("--delete-config", action="append", default=[], metavar="K[,K]")
        grow = command("add-partitions", "grow the partition count (keyed ordering changes)", mutating=True)
        grow.add_argument("--partitions", type=int, required=True, help="the new total")
        for p in (create, alter, grow):
            p.add_argument("--override-policy", action="store_true",
                           help="go ahead although topic policies refuse it (admins; audited with --reason)")
        delete = command("delete", "delete a topic", mutating=True)
        self.add_yes_argument(delete, help="confirm the deletion (without it, nothing is deleted)")
        # --dry-run changes nothing, so it asks for no --actor (a purge without --dry-run does).
        purge = command("purge", "delete records below an offset (DeleteRecords)", mutating=True, actor_required=False)
        purge.add_argument("--partition", action="append", default=[], metavar="P[,P]", help="default: all")
        purge.add_argument("--offset", type=int, help="delete below this offset (default: everything now present)")
        purge.add_argument("--dry-run", action="store_true", help="show what would be deleted and stop")

    def handle(self, *args, **options):
        action = options["action"].replace("-", "_")
        try:
            getattr(self, f"do_{action}")(options)
        except (ConsoleError, KafkaGatewayError) as exc:
            raise CommandError(exc.message) from exc

    def emit(self, options, data, table_lines) -> None:
        if options["format"] == "json":
            self.stdout.write(json.dumps(data, indent=2, default=str))
        else:
            for line in table_lines:
                self.stdout.write(line)

    def _proposed(self, options, actor, reason: str, action: str, kwargs: dict) -> bool:
        """On a protected topic the change is asked for (a change request another person approves), not run."""
        change = propose_if_protected(actor=actor, action=action, cluster=options["cluster"], kwargs=kwargs,
                                      reason=reason)
        if change is not None:
            proposed_output(self, options, change)
        return change is not None

    def do_list(self, options):
        rows = selectors.filter_topics(selectors.topic_table(options["cluster"]), query=options["search"],
                                       regex=options["regex"], include_internal=options["include_internal"])
        lines = [f"{'TOPIC':<50} {'PARTITIONS':>10} {'RF':>3} {'UNDER-REPL':>10} {'OFFLINE':>7} {'MESSAGES':>12}"]
        lines += [f"{r.name:<50} {r.partitions:>10} {r.replication_factor:>3} {r.under_replicated:>10} {r.offline:>7} "
                  f"{r.messages:>12}" for r in rows]
        self.emit(options, topic_rows_json(rows), lines)

    def do_describe(self, options):
        detail = selectors.topic_detail(options["cluster"], options["topic"])
        data = topic_detail_json(detail)
        lines = [f"Topic: {detail.name}\tTopicId: {detail.topic_id}\tPartitionCount: {len(detail.partitions)}\t"
                 f"ReplicationFactor: {detail.replication_factor}"]
        lines += [f"\tPartition: {p.partition}\tLeader: {p.leader if p.leader is not None else 'none'}\t"
                  f"Replicas: {','.join(map(str, p.replicas))}\tIsr: {','.join(map(str, p.isr))}\t"
                  f"Start: {p.start}\tEnd: {p.end}" for p in detail.partitions]
        lines += ["Configs (overrides):"] + [f"\t{c.name}={c.value} ({c.source}; broker default {c.inherited})"
                                             for c in detail.configs if c.is_override]
        self.emit(options, data, lines)

    def do_create(self, options):
        actor, reason = self.acting(options, role=Role.ADMIN)
        services.topic_create(actor=actor, cluster=options["cluster"], name=options["topic"],
                              partitions=options["partitions"], replication_factor=options["replication_factor"],
                              configs=_pairs(options["config"]), reason=reason,
                              policy_override=options["override_policy"])
        self.emit(options, {"topic": options["topic"], "created": True}, [f"Created topic {options['topic']}."])

    def do_alter_config(self, options):
        actor, reason = self.acting(options, role=Role.ADMIN)
        delete = parse_keys(options["delete_config"])
        if self._proposed(options, actor, reason, CONFIG, config_kwargs(
                topic=options["topic"], set_values=_pairs(options["add_config"]), delete=delete,
                policy_override=options["override_policy"])):
            return
        after = services.topic_configs_alter(actor=actor, cluster=options["cluster"], topic=options["topic"],
                                             set_values=_pairs(options["add_config"]), delete=delete, reason=reason,
                                             policy_override=options["override_policy"])
        self.emit(options, after, [f"{k}={(v or {}).get('value')} ({(v or {}).get('source')})" for k, v in after.items()])

    def do_add_partitions(self, options):
        actor, reason = self.acting(options, role=Role.ADMIN)
        services.topic_partitions_add(actor=actor, cluster=options["cluster"], topic=options["topic"],
                                      new_total=options["partitions"], reason=reason,
                                      policy_override=options["override_policy"])
        self.emit(options, {"topic": options["topic"], "partitions": options["partitions"]},
                  [f"{options['topic']} now has {options['partitions']} partitions."])

    def do_delete(self, options):
        if not options["yes"]:
            raise CommandError(f"Refusing to delete {options['topic']} without --yes.")
        actor, reason = self.acting(options, role=Role.ADMIN)
        if self._proposed(options, actor, reason, DELETE, {"topic": options["topic"]}):
            return
        services.topic_delete(actor=actor, cluster=options["cluster"], topic=options["topic"],
                              confirm=options["topic"], reason=reason)
        self.emit(options, {"topic": options["topic"], "deleted": True}, [f"Deleted topic {options['topic']}."])

    def do_purge(self, options):
        try:
            partitions = [int(p) for p in parse_keys(options["partition"])]
        except ValueError as exc:
            raise CommandError("--partition takes numbers separated by commas") from exc
        scope = {"cluster": options["cluster"], "topic": options["topic"], "partitions": partitions,
                 "before": options["offset"]}
        if options["dry_run"]:
            rows = services.topic_purge_preview(**scope)
        else:
            actor, reason = self.acting(options, role=Role.ADMIN)
            if self._proposed(options, actor, reason, PURGE, purge_kwargs(
                    topic=options["topic"], partitions=partitions, before=options["offset"])):
                return
            rows = services.topic_records_purge(actor=actor, reason=reason, **scope)
        lines = [f"{'PARTITION':>9} {'LOG-START':>10} {'LOG-END':>10} {'DELETE-BELOW':>12} {'RECORDS':>10}"]
        lines += [f"{r.partition:>9} {r.log_start:>10} {r.log_end:>10} {r.target:>12} {r.records_deleted:>10}"
                  + (" (clamped)" if r.clamped else "") for r in rows]
        self.emit(options, purge_rows_json(rows), lines)
