"""`kafka-consumer-groups --reset-offsets` with the console's guarantees: dry run by default, refusal while the
group is active, audit with offsets before and after, and revert of an earlier reset. A share group's start
offsets reset the same way, with `kafka-share-groups --reset-offsets` semantics (--to-earliest, --to-latest,
--to-datetime), and a streams group's with `kafka-streams-groups --reset-offsets` semantics (--all-topics means
the topology's input topics); the output says which tool's semantics it followed. On a protected group, --execute
makes a change request instead (`manage.py changes`)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import CommandError

from changes.actions.offsets import RESET, reset_kwargs
from changes.proposals import propose_if_protected, proposed_output
from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError
from offsets.kinds import kind_for
from offsets.resets import services
from offsets.resets.preview import reset_preview
from offsets.resets.strategy_input import scope_from, strategy_from
from offsets.serializers import reset_after_json, reset_preview_json


class Command(ActorCommand):
    help = __doc__

    def add_arguments(self, parser):
        self.add_cluster_argument(parser)
        parser.add_argument("--group", required=True)
        parser.add_argument("--all-topics", action="store_true")
        parser.add_argument("--topic", action="append", default=[], metavar="TOPIC[:P,P]")
        strategy = parser.add_mutually_exclusive_group(required=True)
        for flag in ("to-earliest", "to-latest", "to-current"):
            strategy.add_argument(f"--{flag}", action="store_true")
        strategy.add_argument("--to-offset", type=int)
        strategy.add_argument("--shift-by", type=int)
        strategy.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss[zone]")
        strategy.add_argument("--by-duration", metavar="PnDTnHnMnS")
        strategy.add_argument("--from-file", metavar="CSV")
        strategy.add_argument("--from-group", metavar="GROUP")
        strategy.add_argument("--revert", type=int, metavar="AUDIT_EVENT_ID", help="go back to a reset's 'before'")
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--dry-run", action="store_true", help="the default: show the plan, change nothing")
        mode.add_argument("--execute", action="store_true",
                      help="on a protected group: make a change request that another person approves")
        parser.add_argument("--export", action="store_true", help="print the plan as topic,partition,offset CSV")
        parser.add_argument("--if-unchanged", metavar="FINGERPRINT",
                            help="with --execute: refuse if the committed offsets differ from the dry run's")
        self.add_format_argument(parser, help="table, or json: the plan with its fingerprint (a dry run; printed "
                                              "even while the group has members, with why execute would refuse), "
                                              "or the offsets read back (--execute)")
        self.add_actor_arguments(parser, required=False)

    def handle(self, *args, **options):
        try:
            self._handle(options)
        except (ConsoleError, KafkaGatewayError) as exc:
            raise CommandError(exc.message) from exc

    def _strategy(self, options):
        for name in ("to-earliest", "to-latest", "to-current", "to-offset", "shift-by", "to-datetime",
                     "by-duration", "from-file", "from-group"):
            value = options[name.replace("-", "_")]
            if value is None or value is False:
                continue
            if name == "from-file":
                try:
                    value = Path(value).read_text()
                except OSError as exc:
                    raise CommandError(f"Cannot read --from-file {options['from_file']}: {exc.strerror}") from exc
            return strategy_from(options["cluster"], name, None if value is True else str(value))
        raise CommandError("Give one reset strategy.")

    def _handle(self, options):
        cluster, group = options["cluster"], options["group"]
        kind = kind_for(cluster, group)
        if options["revert"] is not None:
            event, strategy, scope = services.revert_strategy(options["revert"], kind)
            if event.target != f"group:{group}":
                raise CommandError(f"Audit event #{event.seq} reset {event.target}, not group:{group}.")
        else:
            scope = scope_from(options["all_topics"], options["topic"]) if not options["from_file"] else []
            strategy = self._strategy(options)
        if options["execute"]:
            actor, reason = self.acting(options, role=Role.OPERATOR)
            # A protected group: the reset is asked for (a change request another person approves), not run.
            change = propose_if_protected(actor=actor, action=RESET, cluster=cluster, reason=reason, kwargs=reset_kwargs(
                group=group, kind=kind, scope=scope, strategy=strategy, revert_of=options["revert"]))
            if change is not None:
                proposed_output(self, options, change)
                return
            after = services.group_offsets_reset(actor=actor, cluster=cluster, group=group, scope=scope,
                                                 strategy=strategy, reason=reason, confirm=group,
                                                 expected_fingerprint=options["if_unchanged"],
                                                 revert_of=options["revert"], kind=kind)
            if options["format"] == "json":
                self.stdout.write(json.dumps(reset_after_json(after), indent=2))
                return
            lines = [f"{topic},{partition},{offset}" for topic, parts in after.items()
                     for partition, offset in parts.items()]
            if not options["export"]:
                self.stdout.write(f"Executed. {kind.positions_label} read back from Kafka (topic,partition,offset):")
            self.stdout.write("".join(line + "\n" for line in lines), ending="")
            return
        preview = reset_preview(cluster, group, scope, strategy, kind=kind)
        if options["format"] == "json" and not options["export"]:
            self.stdout.write(json.dumps(reset_preview_json(preview, kind=kind), indent=2))
            return
        if not preview.allowed:
            raise CommandError(kind.msg_active.format(group=group, state=preview.state, members=preview.members))
        if options["export"]:
            self.stdout.write(preview.plan.export_csv(), ending="")
            return
        self._table(preview, kind.semantics)

    def _table(self, preview, semantics: str) -> None:
        plan = preview.plan
        self.stdout.write(f"{'GROUP':<24} {'TOPIC':<30} {'PARTITION':>9} {'CURRENT':>10} {'NEW-OFFSET':>10} "
                          f"{'DELTA':>8} {'LOG-START':>10} {'LOG-END':>10}  NOTE")
        for row in plan.rows:
            current = "-" if row.current is None else row.current
            delta = "-" if row.delta is None else f"{row.delta:+d}"
            note = ("clamped; " if row.clamped else "") + row.note
            target = "(deleted)" if row.deletes else row.target
            self.stdout.write(f"{plan.group:<24} {row.ref.topic:<30} {row.ref.partition:>9} {current!s:>10} "
                              f"{target:>10} {delta:>8} {row.log_start:>10} {row.log_end:>10}  {note}")
        self.stdout.write(f"Dry run ({semantics}): nothing changed. State {preview.state}. To execute exactly this "
                          f"plan: --execute --if-unchanged {preview.fingerprint}")
