"""Topic policies of a cluster from the shell: list | create | update | delete | report. The same services as the
pages; changes need the admin role and are audited as --actor."""

from __future__ import annotations

import json

from django.core.management.base import CommandError

from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from topics import selectors as topic_selectors
from topics.policies import selectors, services
from topics.policies.rules import PolicyInputError, parse_config_rule
from topics.serializers import POLICY_FIELDS as RULE_OPTIONS, policies_json, policy_report_json


class Command(ActorCommand):
    help = "Topic policies: list | create | update | delete | report"

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser, dest="action")
        listing = sub.add_parser("list", help="the cluster's policies and their rules")
        self.add_format_argument(listing)
        report = sub.add_parser("report", help="the topics that break today's policies (from the shared topic table)")
        self.add_format_argument(report)
        for name, text in (("create", "add a policy"), ("update", "replace a policy's rules")):
            p = sub.add_parser(name, help=text)
            self.add_format_argument(p)
            p.add_argument("--name", required=True)
            p.add_argument("--applies-to", default="", help="RE2 searched in topic names (default: every topic)")
            p.add_argument("--name-pattern", default="", help="RE2 the whole topic name must match")
            p.add_argument("--name-message", default="")
            p.add_argument("--min-partitions", type=int)
            p.add_argument("--max-partitions", type=int)
            p.add_argument("--partitions-message", default="")
            p.add_argument("--min-replication-factor", type=int)
            p.add_argument("--max-replication-factor", type=int)
            p.add_argument("--replication-message", default="")
            p.add_argument("--config-rule", action="append", default=[], metavar="RULE",
                           help="e.g. 'min.insync.replicas >= 2: message' (repeat for more)")
            self.add_actor_arguments(p)
        delete = sub.add_parser("delete", help="remove a policy")
        self.add_format_argument(delete)
        delete.add_argument("--name", required=True)
        self.add_actor_arguments(delete)

    def handle(self, *args, **options):
        getattr(self, f"do_{options['action']}")(options)

    def emit(self, options, data, lines) -> None:
        if options["format"] == "json":
            self.stdout.write(json.dumps(data, indent=2, default=str))
        else:
            for line in lines:
                self.stdout.write(line)

    def do_list(self, options):
        rows = selectors.policy_rows(options["cluster"])
        data = policies_json(rows)
        lines = []
        for row in rows:
            policy = selectors.policy_from_row(row)
            lines.append(f"{row.name}: applies to {row.applies_to or 'every topic'}")
            if row.name_pattern:
                message = f": {row.name_message}" if row.name_message else ""
                lines.append(f"  name matches {row.name_pattern}{message}")
            for what, low, high, message in (
                    ("partitions", row.min_partitions, row.max_partitions, row.partitions_message),
                    ("replication factor", row.min_replication_factor, row.max_replication_factor,
                     row.replication_message)):
                if low is not None or high is not None:
                    lines.append(f"  {what} {low if low is not None else '-'}..{high if high is not None else '-'}"
                                 + (f": {message}" if message else ""))
            lines += [f"  {rule.text}" for rule in policy.config_rules]
        self.emit(options, data, lines or ["No policies."])

    def _save(self, options, *, create: bool):
        actor, reason = self.acting(options, role=Role.ADMIN)
        try:
            rules = [parse_config_rule(text) for text in options["config_rule"]]
        except PolicyInputError as exc:
            raise CommandError(exc.message) from exc
        values = {key: options[key] for key in RULE_OPTIONS}
        row = services.topic_policy_save(actor=actor, cluster=options["cluster"], name=options["name"],
                                         values={**values, "config_rules": rules}, reason=reason, create=create)
        self.emit(options, {"name": row.name, "saved": True}, [f"Saved policy {row.name}."])

    def do_create(self, options):
        self._save(options, create=True)

    def do_update(self, options):
        self._save(options, create=False)

    def do_delete(self, options):
        actor, reason = self.acting(options, role=Role.ADMIN)
        services.topic_policy_delete(actor=actor, cluster=options["cluster"], name=options["name"], reason=reason)
        self.emit(options, {"name": options["name"], "deleted": True}, [f"Deleted policy {options['name']}."])

    def do_report(self, options):
        cluster = options["cluster"]
        rows = selectors.policy_report(cluster, topic_selectors.topic_table(cluster))
        data = policy_report_json(rows)
        lines = [f"{r.topic}: {v.text}" for r in rows for v in r.violations]
        self.emit(options, data, lines or ["Every topic follows the policies."])
