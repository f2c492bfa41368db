"""Consumer groups from the shell, as `kafka-consumer-groups` shows them: list, describe (offsets, --members,
--state), and delete a group or its offsets for a topic with the web's guarantees (refused while the group has
members, a preview first, audited)."""

from __future__ import annotations

import json

from django.core.management.base import CommandError

from changes.actions.offsets import OFFSETS_DELETE, SHARE_OFFSETS_DELETE, offsets_delete_kwargs
from changes.proposals import propose_if_protected, proposed_output
from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from offsets import services
from offsets.kinds import CONSUMER, SHARE, GroupKind, kind_for
from offsets.management.commands._typed_groups import TYPED_DESCRIBE
from offsets.resets.planning import parse_topic_scope
from offsets.selectors import groups_of_every_type
from offsets.selectors_describe import GroupReport, group_report, groups_list
from offsets.serializers import consumer_describe_json, group_listings_json

MISSING = "-"


def _cell(value) -> str:
    return MISSING if value is None or value == "" else str(value)


def _table(headers: list[str], rows: list[list]) -> list[str]:
    cells = [[_cell(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]
    return [" ".join(text.ljust(width) for text, width in zip(line, widths)).rstrip()
            for line in [headers, *cells]]


class Command(ActorCommand):
    help = __doc__

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser)
        listing = sub.add_parser("list", help="every consumer group (kafka-consumer-groups --list)")
        listing.add_argument("--state", action="store_true", help="with each group's state")
        listing.add_argument("--type", action="store_true", help="with each group's type (classic, consumer)")
        self.add_format_argument(listing)
        listing.add_argument("--all-types", action="store_true",
                             help="share and streams groups too (Kafka's ListGroups of every type, as kafka-groups)")
        describe = sub.add_parser("describe", help="a group's offsets and lag (kafka-consumer-groups --describe)")
        describe.add_argument("group")
        view = describe.add_mutually_exclusive_group()
        view.add_argument("--members", action="store_true")
        view.add_argument("--state", action="store_true")
        self.add_format_argument(describe)
        delete = sub.add_parser("delete", help="delete an inactive group and its committed offsets")
        delete.add_argument("group")
        self.add_yes_argument(delete)
        self.add_actor_arguments(delete, required=False)
        offsets = sub.add_parser("delete-offsets", help="delete a group's committed offsets for a topic")
        offsets.add_argument("group")
        offsets.add_argument("--topic", required=True, metavar="TOPIC[:P,P]")
        self.add_yes_argument(offsets)
        self.add_actor_arguments(offsets, required=False)

    def handle(self, *args, **options):
        cluster = options["cluster"]
        match options["subcommand"]:
            case "list":
                self._list(cluster, options)
            case "describe":
                kind = kind_for(cluster, options["group"])
                if kind is not CONSUMER:
                    self._describe_typed(cluster, kind, options)
                else:
                    self._describe(group_report(cluster, options["group"]), options)
            case "delete":
                self._delete(cluster, options)
            case "delete-offsets":
                self._delete_offsets(cluster, options)

    def _list(self, cluster: str, options) -> None:
        if options["all_types"]:
            groups, problem = groups_of_every_type(cluster)
            if problem:
                raise CommandError(problem)
        else:
            groups = groups_list(cluster)
        if options["format"] == "json":
            self.stdout.write(json.dumps(group_listings_json(groups), indent=2))
            return
        if not options["state"] and not options["type"]:
            for g in groups:
                self.stdout.write(g.group_id)
            return
        headers = ["GROUP"] + (["TYPE"] if options["type"] else []) + (["STATE"] if options["state"] else [])
        rows = [[g.group_id] + ([(g.group_type or g.protocol).capitalize()] if options["type"] else [])
                + ([g.state] if options["state"] else []) for g in groups]
        for line in _table(headers, rows):
            self.stdout.write(line)

    def _describe(self, report: GroupReport, options) -> None:
        description = report.description
        if options["format"] == "json":
            payload = consumer_describe_json(report, members=options["members"], state=options["state"])
            self.stdout.write(json.dumps(payload, indent=2))
            return
        if options["state"]:
            coordinator = description.coordinator
            where = MISSING if coordinator is None else f"{coordinator.host}:{coordinator.port} ({coordinator.id})"
            lines = _table(["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"],
                           [[report.group, where, report.protocol, description.state, len(description.members)]])
        elif options["members"]:
            lines = _table(["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"],
                           [[report.group, m.member_id, m.host, m.client_id, len(m.assignment)]
                            for m in description.members])
        else:
            lines = _table(["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID",
                            "HOST", "CLIENT-ID"],
                           [[report.group, r.topic, r.partition, r.current_offset, r.log_end_offset, r.lag,
                             r.consumer_id, r.host, r.client_id] for r in report.rows])
        if not description.members and not options["state"]:
            self.stdout.write(f"Consumer group '{report.group}' has no active members.")
        for line in lines:
            self.stdout.write(line)

    def _describe_typed(self, cluster: str, kind: GroupKind, options) -> None:
        group = options["group"]
        out = TYPED_DESCRIBE[kind.name](group, kind.detail(cluster, group), members=options["members"],
                                        state=options["state"], as_json=options["format"] == "json")
        if isinstance(out, str):
            self.stdout.write(out)
            return
        for line in _table(out[0], out[1:]):
            self.stdout.write(line)

    def _delete(self, cluster: str, options) -> None:
        group = options["group"]
        kind = kind_for(cluster, group)
        summary = kind.delete_summary(cluster, group)
        if not options["yes"]:
            self.stdout.write(f"Deleting {kind.label} '{group}' ({summary.state}, {summary.members} members) would "
                              f"delete its {kind.positions_noun} on {summary.partitions} partitions (kept in the "
                              f"audit log). Run again with --yes --actor USER --reason TEXT.")
            return
        actor, reason = self.acting(options, role=Role.ADMIN)
        services.group_delete(actor=actor, cluster=cluster, group=group, confirm=group, reason=reason, kind=kind)
        self.stdout.write(f"Deleted {kind.label} '{group}'.")

    def _delete_offsets(self, cluster: str, options) -> None:
        group = options["group"]
        if kind_for(cluster, group) is SHARE:
            self._delete_share_offsets(cluster, options)
            return
        try:
            scope = parse_topic_scope(options["topic"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        partitions = list(scope.partitions) if scope.partitions else None
        chosen = services.group_offsets_delete_preview(cluster=cluster, group=group, topic=scope.topic,
                                                      partitions=partitions)
        listed = ", ".join(f"{ref.topic}-{ref.partition}@{offset}" for ref, offset in sorted(chosen.items()))
        if not options["yes"]:
            self.stdout.write(f"Would delete group '{group}''s committed offsets: {listed}. "
                              f"Run again with --yes --actor USER --reason TEXT.")
            return
        actor, reason = self.acting(options, role=Role.ADMIN)
        change = propose_if_protected(actor=actor, action=OFFSETS_DELETE, cluster=cluster, reason=reason,
                                      kwargs=offsets_delete_kwargs(group=group, topic=scope.topic,
                                                                   partitions=partitions))
        if change is not None:
            proposed_output(self, options, change)
            return
        services.group_offsets_delete(actor=actor, cluster=cluster, group=group, topic=scope.topic,
                                      partitions=partitions, confirm=group, reason=reason)
        self.stdout.write(f"Deleted group '{group}''s committed offsets: {listed}.")

    def _delete_share_offsets(self, cluster: str, options) -> None:
        """kafka-share-groups --delete-offsets works per topic: a partition list is refused, not ignored."""
        group, topic = options["group"], options["topic"]
        if ":" in topic:
            raise CommandError("A share group's start offsets are deleted for a whole topic; give --topic TOPIC.")
        starts = [p for p in SHARE.detail(cluster, group).partitions if p.ref.topic == topic]
        if not starts:
            raise CommandError(f"Share group '{group}' has no start offsets in topic '{topic}'.")
        listed = ", ".join(f"{p.ref.topic}-{p.ref.partition}@{p.start_offset}" for p in starts)
        if not options["yes"]:
            self.stdout.write(f"Would delete share group '{group}''s start offsets: {listed}. "
                              f"Run again with --yes --actor USER --reason TEXT.")
            return
        actor, reason = self.acting(options, role=Role.ADMIN)
        change = propose_if_protected(actor=actor, action=SHARE_OFFSETS_DELETE, cluster=cluster, reason=reason,
                                      kwargs={"group": group, "topic": topic})
        if change is not None:
            proposed_output(self, options, change)
            return
        services.share_offsets_delete(actor=actor, cluster=cluster, group=group, topic=topic, confirm=group,
                                      reason=reason)
        self.stdout.write(f"Deleted share group '{group}''s start offsets: {listed}.")
