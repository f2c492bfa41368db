"""ACLs from the shell: list (as `kafka-acls --list` prints them), add and remove (admin only). Without
--confirm, add and remove print the exact bindings they would change and change nothing."""

from __future__ import annotations

import json
from itertools import groupby

from django.core.management.base import CommandError

from access import selectors, services
from access.bindings import bindings_for, query_for
from access.serializers import acls_json
from changes.actions import access as acl_changes
from changes.proposals import propose_if_protected, proposed_output
from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from gateway.kafka.types import ACL_OPERATIONS, ACL_PATTERN_TYPES, ACL_PERMISSIONS, ACL_RESOURCE_TYPES

FORMAT_HELP = "table (as kafka-acls --list prints them; 'kafka' is the same) or json"
MSG_REMOVE_NEEDS_FILTER = "Name at least a principal or a resource: remove never matches every binding."


def _pattern(entry) -> str:
    return (f"ResourcePattern(resourceType={entry.resource_type}, name={entry.resource_name}, "
            f"patternType={entry.pattern_type})")


def kafka_acls_lines(entries) -> list[str]:
    """kafka-acls --list's layout: a heading per resource pattern, then one line per binding."""
    lines = []
    for pattern, group in groupby(sorted(entries, key=_pattern), key=_pattern):
        lines.append(f"Current ACLs for resource `{pattern}`:")
        lines += [f"\t(principal={e.principal}, host={e.host}, operation={e.operation}, "
                  f"permissionType={e.permission})" for e in group]
        lines.append("")
    return lines


class Command(ActorCommand):
    help = __doc__

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser)
        listing = sub.add_parser("list", help="bindings matching the filter (all without one)")
        add = sub.add_parser("add", help="create bindings: one per --operation (admin)")
        remove = sub.add_parser("remove", help="delete the bindings matching the filter (admin)")
        for command in (listing, remove):
            command.add_argument("--principal", default="")
            command.add_argument("--resource-type", default="", choices=["", *ACL_RESOURCE_TYPES])
            command.add_argument("--resource-name", default="")
            command.add_argument("--pattern-type", default="", choices=["", "ANY", "MATCH", *ACL_PATTERN_TYPES])
            command.add_argument("--operation", default="", choices=["", *ACL_OPERATIONS])
            command.add_argument("--permission", default="", choices=["", *ACL_PERMISSIONS])
            command.add_argument("--host", default="")
        add.add_argument("--principal", required=True, help="Type:name, e.g. User:alice")
        add.add_argument("--resource-type", required=True, choices=ACL_RESOURCE_TYPES)
        add.add_argument("--resource-name", default="", help="* for every resource of the type")
        add.add_argument("--pattern-type", default="LITERAL", choices=ACL_PATTERN_TYPES)
        add.add_argument("--operation", action="append", required=True, choices=ACL_OPERATIONS)
        add.add_argument("--permission", default="ALLOW", choices=ACL_PERMISSIONS)
        add.add_argument("--host", default="*", help="*, one IP address, or a CIDR range such as 10.0.0.0/8 "
                         "(a cluster at metadata.version 4.4-IV1 or later: Kafka 4.4)")
        self.add_yes_argument(add, confirm=True, help="create them; without it only the preview prints")
        remove.add_argument("--confirm", default="", metavar="COUNT",
                            help="the number of bindings the preview listed; without it only the preview prints")
        for command in (add, remove):
            self.add_actor_arguments(command, required=False)
        for command in (listing, add, remove):
            self.add_format_argument(command, also=("kafka",), help=FORMAT_HELP)

    def handle(self, *args, **options):
        getattr(self, "_" + options["subcommand"])(options["cluster"], options)

    def _emit(self, options, entries, heading: str = "") -> None:
        if options["format"] == "json":
            self.stdout.write(json.dumps(acls_json(entries), indent=2, ensure_ascii=False))
            return
        if heading:
            self.stdout.write(heading)
        for line in kafka_acls_lines(entries):
            self.stdout.write(line)

    def _query(self, options):
        return query_for(principal=options["principal"], resource_type=options["resource_type"],
                         resource_name=options["resource_name"], pattern_type=options["pattern_type"],
                         operation=options["operation"], permission=options["permission"], host=options["host"])

    def _list(self, cluster: str, options) -> None:
        heading = f"ACLs for principal `{options['principal']}`" if options["principal"] else ""
        self._emit(options, selectors.acls_list(cluster, self._query(options)), heading)

    def _add(self, cluster: str, options) -> None:
        entries = bindings_for(principal=options["principal"], resource_type=options["resource_type"],
                               resource_name=options["resource_name"], pattern_type=options["pattern_type"],
                               operations=options["operation"], permission=options["permission"],
                               host=options["host"])
        if not options["confirm"]:
            change = services.acls_create_preview(cluster=cluster, entries=entries)
            self._emit(options, change.changed, f"Would create {len(change.changed)} binding(s) "
                                                f"({len(change.unchanged)} exist already):")
            if options["format"] != "json":
                self.stdout.write("Run again with --confirm --actor NAME --reason TEXT.")
            return
        actor, reason = self.acting(options, role=Role.ADMIN)
        asked = propose_if_protected(actor=actor, action=acl_changes.CREATE, cluster=cluster, reason=reason,
                                     kwargs=acl_changes.acl_kwargs(entries))
        if asked is not None:
            proposed_output(self, options, asked)
            return
        change = services.acls_create(actor=actor, cluster=cluster, entries=entries, reason=reason)
        self._emit(options, change.changed, f"Created {len(change.changed)} binding(s):")

    def _remove(self, cluster: str, options) -> None:
        if not (options["principal"] or options["resource_type"] or options["resource_name"]):
            raise CommandError(MSG_REMOVE_NEEDS_FILTER)
        matched = selectors.acls_list(cluster, self._query(options))
        if not options["confirm"]:
            self._emit(options, matched, f"Would delete {len(matched)} binding(s):")
            if options["format"] != "json" and matched:
                self.stdout.write(f"Run again with --confirm {len(matched)} --actor NAME --reason TEXT.")
            return
        actor, reason = self.acting(options, role=Role.ADMIN)
        if matched and str(options["confirm"]).strip() == str(len(matched)):
            asked = propose_if_protected(actor=actor, action=acl_changes.DELETE, cluster=cluster, reason=reason,
                                         kwargs=acl_changes.acl_kwargs(matched))
            if asked is not None:
                proposed_output(self, options, asked)
                return
        deleted = services.acls_delete(actor=actor, cluster=cluster, entries=matched, confirm=options["confirm"],
                                       reason=reason)
        self._emit(options, deleted, f"Deleted {len(deleted)} binding(s):")
