"""Bulk topic actions from the shell: delete | config | partitions on the topics a filter (or --topic) picks.
Without --yes, the preview of every change (a dry run); with --yes, that change, audited per topic and as a
batch. Topic policies apply to config and partition changes."""

from __future__ import annotations

import json

from django.core.management.base import CommandError

from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from console.parsing import parse_keys, parse_pairs
from topics import selectors
from topics.bulk.services import topics_bulk_execute, topics_bulk_preview

MSG_SELECT = "Choose topics with --search (and --regex) or --topic."


class Command(ActorCommand):
    help = "Bulk topic actions: delete | config | partitions (dry run unless --yes)"

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser, dest="action")
        for name, text in (("delete", "delete the chosen topics"), ("config", "set or remove configs on each"),
                           ("partitions", "grow each to a partition count")):
            p = sub.add_parser(name, help=text)
            self.add_format_argument(p)
            p.add_argument("--search", default="",
                           help="substring of topic names, or a regular expression with --regex")
            p.add_argument("--regex", action="store_true")
            p.add_argument("--topic", action="append", default=[], help="a topic by name (repeat for more)")
            self.add_yes_argument(p, help="do it; without --yes, only the preview")
            self.add_actor_arguments(p, required=False)
            if name == "config":
                p.add_argument("--add-config", action="append", default=[], metavar="K=V[,K=V]")
                p.add_argument("--delete-config", action="append", default=[], metavar="K[,K]")
            if name == "partitions":
                p.add_argument("--partitions", type=int, required=True, help="the new total")
            if name != "delete":
                p.add_argument("--override-policy", action="store_true",
                               help="go ahead although topic policies refuse it (admins; audited with --reason)")

    def handle(self, *args, **options):
        cluster, action = options["cluster"], options["action"]
        names = list(options["topic"])
        if options["search"]:
            rows = selectors.filter_topics(selectors.topic_table(cluster), query=options["search"],
                                           regex=options["regex"])
            names += [r.name for r in rows]
        if not names:
            raise CommandError(MSG_SELECT)
        try:
            set_values = parse_pairs(options.get("add_config") or [])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        args = {"action": action, "set_values": set_values, "delete": parse_keys(options.get("delete_config") or []),
                "new_total": options.get("partitions"), "policy_override": options.get("override_policy", False)}
        plan = topics_bulk_preview(cluster=cluster, names=names, **args)
        if not options["yes"]:
            self._preview(plan, options)
            return
        actor, reason = self.acting(options, role=Role.ADMIN)
        outcome = topics_bulk_execute(actor=actor, cluster=cluster, names=[c.topic for c in plan.to_change],
                                      confirm=plan.phrase, reason=reason, **args)
        failed = {**{c.topic: c.refused for c in plan.left_alone}, **outcome.failed}
        if options["format"] == "json":
            self.stdout.write(json.dumps({"done": outcome.done, "failed": failed, "batch": outcome.batch_id},
                                         indent=2))
        else:
            self.stdout.write(f"Done: {len(outcome.done)} topic(s); failed: {len(failed)}. Batch {outcome.batch_id}.")
            for name, why in failed.items():
                self.stdout.write(f"FAILED {name}: {why}")
        if outcome.failed:
            raise CommandError(f"{len(outcome.failed)} topic(s) failed: {', '.join(sorted(outcome.failed))}")

    def _preview(self, plan, options) -> None:
        if options["format"] == "json":
            self.stdout.write(json.dumps({"action": plan.action, "phrase": plan.phrase, "changes": [
                {"topic": c.topic, "change": c.summary, "left_alone": c.refused, "policy": list(c.policy)}
                for c in plan.changes]}, indent=2))
            return
        for c in plan.changes:
            self.stdout.write(f"{c.topic}\t{c.summary}" + (f"\tLEFT ALONE: {c.refused}" if c.refused else ""))
        self.stdout.write(f"Dry run: nothing changed. {len(plan.to_change)} topic(s) would change, "
                          f"{len(plan.left_alone)} left alone; add --yes (with --actor and --reason) to do it.")
