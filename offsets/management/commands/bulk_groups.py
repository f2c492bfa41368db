"""Bulk group actions (consumer, share and streams groups) from the shell: delete | delete-offsets | reset on the groups a filter (or --group)
picks. Without --yes, the preview of every group's change (a dry run); with --yes, that change, audited per
group and as a batch. Resets go through the single-group reset service, with its refusals."""

from __future__ import annotations

import json

from django.core.management.base import CommandError

from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from offsets.bulk.planning import RESET
from offsets.bulk.services import groups_bulk_execute, groups_bulk_preview
from offsets.selectors import groups_of_every_type
from offsets.resets.strategy_input import scope_from, strategy_from

MSG_SELECT = "Choose groups with --search (and --state) or --group."
MSG_NONE_MATCH = "No group of cluster '{cluster}' matches --search {search!r}{state}: nothing to do."
STRATEGY_FLAGS = ("to-earliest", "to-latest", "to-current", "to-offset", "shift-by", "to-datetime", "by-duration")


class Command(ActorCommand):
    help = "Bulk group actions on groups of any type: delete | delete-offsets | reset (dry run unless --yes)"

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser, dest="action")
        for name, text in (("delete", "delete the chosen groups (admin)"),
                           ("delete-offsets", "delete each group's committed offsets of one topic (admin)"),
                           ("reset", "the same offset reset for each group (operator)")):
            p = sub.add_parser(name, help=text)
            self.add_format_argument(p)
            p.add_argument("--search", default="", help="substring of group ids (any case)")
            p.add_argument("--state", default="", help="only groups in this state (Empty, Stable, ...)")
            p.add_argument("--group", action="append", default=[], help="a group by id (repeat for more)")
            self.add_yes_argument(p, help="do it; without --yes, only the preview")
            self.add_actor_arguments(p, required=False)
            if name == "delete-offsets":
                p.add_argument("--topic", required=True)
            if name == "reset":
                p.add_argument("--all-topics", action="store_true")
                p.add_argument("--topic", action="append", default=[], metavar="TOPIC[:P,P]")
                strategy = p.add_mutually_exclusive_group(required=True)
                for flag in STRATEGY_FLAGS[:3]:
                    strategy.add_argument(f"--{flag}", action="store_true")
                for flag in STRATEGY_FLAGS[3:]:
                    strategy.add_argument(f"--{flag}")

    def _args(self, options) -> dict:
        cluster, action = options["cluster"], options["action"]
        if action != RESET:
            return {"action": action, "topic": options.get("topic") or ""}
        flag = next(f for f in STRATEGY_FLAGS if options[f.replace("-", "_")] not in (None, False))
        value = options[flag.replace("-", "_")]
        return {"action": RESET, "scope": scope_from(options["all_topics"], options["topic"]),
                "strategy": strategy_from(cluster, flag, None if value is True else value)}

    def handle(self, *args, **options):
        cluster = options["cluster"]
        names = list(options["group"])
        if options["search"] or options["state"]:
            needle = options["search"].lower()
            names += [g.group_id for g in groups_of_every_type(cluster)[0] if needle in g.group_id.lower()
                      and (not options["state"] or g.state == options["state"])]
        if not names:
            if options["search"] or options["state"]:
                state = f" in state {options['state']}" if options["state"] else ""
                raise CommandError(MSG_NONE_MATCH.format(cluster=cluster, search=options["search"], state=state))
            raise CommandError(MSG_SELECT)
        args = self._args(options)
        plan = groups_bulk_preview(cluster=cluster, names=names, **args)
        if not options["yes"]:
            self._preview(plan, options)
            return
        actor, reason = self.acting(options, role=Role.OPERATOR if args["action"] == RESET else Role.ADMIN)
        outcome = groups_bulk_execute(actor=actor, cluster=cluster, names=[c.group for c in plan.to_change],
                                      confirm=plan.phrase, reason=reason,
                                      fingerprints={c.group: c.fingerprint for c in plan.to_change}, **args)
        failed = {**{c.group: c.refused for c in plan.left_alone}, **outcome.failed}
        if options["format"] == "json":
            self.stdout.write(json.dumps({"done": outcome.done, "failed": failed, "batch": outcome.batch_id},
                                         indent=2))
        else:
            self.stdout.write(f"Done: {len(outcome.done)} group(s); failed: {len(failed)}. Batch {outcome.batch_id}.")
            for name, why in failed.items():
                self.stdout.write(f"FAILED {name}: {why}")
        if outcome.failed:
            raise CommandError(f"{len(outcome.failed)} group(s) failed: {', '.join(sorted(outcome.failed))}")

    def _preview(self, plan, options) -> None:
        if options["format"] == "json":
            self.stdout.write(json.dumps({"action": plan.action, "phrase": plan.phrase, "changes": [
                {"group": c.group, "type": c.kind, "state": c.state, "members": c.members, "change": c.summary,
                 "left_alone": c.refused} for c in plan.changes]}, indent=2))
            return
        for c in plan.changes:
            left_alone = f"\tLEFT ALONE: {c.refused}" if c.refused else ""
            self.stdout.write(f"{c.group}\t{c.kind}\t{c.state}\t{c.summary}{left_alone}")
        self.stdout.write(f"Dry run: nothing changed. {len(plan.to_change)} group(s) would change, "
                          f"{len(plan.left_alone)} left alone; add --yes (with --actor and --reason) to do it.")
