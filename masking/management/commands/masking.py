"""manage.py masking list|add|delete: a cluster's masking rules (admins change them; audited)."""

from __future__ import annotations

import json

from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from masking import selectors, services
from masking.models import MaskRule
from masking.serializers import mask_rule_json as _row


class Command(ActorCommand):
    help = "Masking rules of a cluster: what each role may not see of which topics' records."

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser)
        listing = sub.add_parser("list", help="the cluster's rules")
        self.add_format_argument(listing)
        add = sub.add_parser("add", help="a rule (admin)")
        add.add_argument("--topics", required=True, help="RE2 pattern over the whole topic name, e.g. 'orders\\..*'")
        add.add_argument("--select", required=True, choices=[c for c, _ in MaskRule.Selector.choices])
        add.add_argument("--target", default="", help="JSON path ($.card.number), header name or regex")
        add.add_argument("--action", required=True, choices=[c for c, _ in MaskRule.Action.choices])
        add.add_argument("--replacement", default="", help="for --action replace")
        add.add_argument("--keep-last", type=int, default=4, help="for --action keep_last (default 4)")
        add.add_argument("--roles", default="viewer,operator", help="roles it masks for (default viewer,operator)")
        self.add_format_argument(add)
        self.add_actor_arguments(add)
        delete = sub.add_parser("delete", help="a rule, by id (admin)")
        delete.add_argument("--id", type=int, required=True)
        self.add_actor_arguments(delete)

    def handle(self, *args, **options):
        cluster, command = options["cluster"], options["subcommand"]
        if command == "list":
            rules = [_row(r) for r in selectors.mask_rule_list(cluster)]
            if options["format"] == "json":
                self.stdout.write(json.dumps(rules))
                return
            for r in rules:
                self.stdout.write(f"#{r['id']:<4} {r['topic_pattern']:<24} {r['selector']:<8} {r['target']:<24} "
                                  f"{r['action']:<9} {','.join(r['roles'])}")
            return
        actor, reason = self.acting(options, role=Role.ADMIN)
        if command == "add":
            rule = services.mask_rule_create(
                actor=actor, cluster=cluster, topic_pattern=options["topics"], selector=options["select"],
                target=options["target"], action=options["action"], replacement=options["replacement"],
                keep_last=options["keep_last"], roles=[r.strip() for r in options["roles"].split(",") if r.strip()],
                reason=reason)
            self.stdout.write(json.dumps(_row(rule)) if options["format"] == "json" else f"Rule #{rule.pk} added.")
            return
        services.mask_rule_delete(actor=actor, cluster=cluster, rule_id=options["id"], reason=reason)
        self.stdout.write(f"Rule #{options['id']} deleted.")
