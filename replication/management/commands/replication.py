"""Brokers, leaders and replica placement from the shell: list brokers (up or down, the controller, racks),
preferred leader election, and partition reassignment with a throttle, its progress, cancel and finish (admin
only, previewed without --confirm, audited)."""

from __future__ import annotations

import json

from console.accounts.commands import ActorCommand
from console.accounts.roles import Role
from replication import selectors, services
from replication.serializers import brokers_json


class Command(ActorCommand):
    help = __doc__

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser)
        brokers = sub.add_parser("brokers", help="every broker, up or down, with its rack and share of replicas")
        self.add_format_argument(brokers)
        elect = sub.add_parser("elect", help="preferred leader election (admin)")
        elect.add_argument("--topic", action="append", metavar="TOPIC[:P,P]",
                           help="a topic, or chosen partitions of it (repeatable); default: every topic")
        self.add_yes_argument(elect, confirm=True, help="elect; without it only the preview prints")
        reassign = sub.add_parser("reassign", help="move replicas or change the replication factor (admin)")
        reassign.add_argument("--topic", required=True)
        how = reassign.add_mutually_exclusive_group(required=True)
        how.add_argument("--assignment", help="PARTITION=BROKER,BROKER,...;... (the first broker leads)")
        how.add_argument("--replication-factor", type=int)
        reassign.add_argument("--throttle", type=int, metavar="BYTES_PER_S",
                              help="replication throttle per broker while the data moves")
        self.add_yes_argument(reassign, confirm=True, help="start; without it only the preview prints")
        status = sub.add_parser("status", help="a topic's reassignment in progress")
        status.add_argument("--topic", required=True)
        cancel = sub.add_parser("cancel", help="cancel a topic's reassignment in progress (admin)")
        cancel.add_argument("--topic", required=True)
        finish = sub.add_parser("finish", help="remove the throttle once a reassignment is complete (admin)")
        finish.add_argument("--topic", required=True)
        for command in (elect, reassign, cancel, finish):
            self.add_actor_arguments(command, required=False)

    def handle(self, *args, **options):
        getattr(self, "_" + options["subcommand"])(options["cluster"], options)

    def _brokers(self, cluster: str, options) -> None:
        overview = selectors.brokers_overview(cluster)
        if options["format"] == "json":
            self.stdout.write(json.dumps(brokers_json(overview), indent=2))
            return
        self.stdout.write(f"{'Id':<4}{'Host':<22}{'Rack':<10}{'State':<7}{'Controller':<12}{'Replicas':<10}Leaders")
        for b in overview.brokers:
            host = f"{b.host}:{b.port}" if b.port else b.host
            self.stdout.write(f"{b.id:<4}{host:<22}{b.rack or '-':<10}{'up' if b.up else 'DOWN':<7}"
                              f"{'yes' if b.is_controller else '':<12}{b.replicas:<10}{b.leaders}")
        self.stdout.write(f"Under-replicated partitions: {overview.under_replicated_partitions}; offline: "
                          f"{overview.offline_partitions}")

    def _elect(self, cluster: str, options) -> None:
        if not options["confirm"]:
            chosen = services.leaders_elect_preview(cluster=cluster, topics=options["topic"])
            self.stdout.write(f"Would elect the preferred leader of {len(chosen)} partition(s):")
            for name, p in chosen:
                self.stdout.write(f"  {name}-{p.partition}: leader {p.leader} -> {p.replicas[0]}")
            return
        actor, reason = self.acting(options, role=Role.ADMIN)
        after = services.leaders_elect(actor=actor, cluster=cluster, topics=options["topic"], reason=reason)
        for partition, state in after.items():
            self.stdout.write(f"  {partition}: leader now {state['leader']}")

    def _targets(self, cluster: str, options) -> dict[int, tuple[int, ...]]:
        return services.reassignment_targets(cluster=cluster, topic=options["topic"],
                                             assignment=options["assignment"] or "",
                                             replication_factor=options["replication_factor"])

    def _reassign(self, cluster: str, options) -> None:
        targets = self._targets(cluster, options)
        if not options["confirm"]:
            moves = services.reassignment_preview(cluster=cluster, topic=options["topic"], targets=targets)
            self.stdout.write(f"Would move {len(moves)} partition(s) of {options['topic']}:")
            for m in moves:
                self.stdout.write(f"  {m.partition}: {list(m.current)} -> {list(m.target)}"
                                  f"{' (new leader)' if m.leader_changes else ''}")
            return
        actor, reason = self.acting(options, role=Role.ADMIN)
        moves = services.reassignment_start(actor=actor, cluster=cluster, topic=options["topic"], targets=targets,
                                            throttle=options["throttle"], reason=reason)
        self.stdout.write(f"Started moving {len(moves)} partition(s); follow with `replication status`, then "
                          f"`replication finish` to remove the throttle.")

    def _status(self, cluster: str, options) -> None:
        rows = selectors.reassignment_progress(cluster, options["topic"])
        if not rows:
            self.stdout.write(f"No reassignment of {options['topic']} in progress.")
        for row in rows:
            r = row["reassignment"]
            self.stdout.write(f"  {r.ref.topic}-{r.ref.partition}: replicas {list(r.replicas)}, adding "
                              f"{list(r.adding)} ({row['percent']}% caught up), removing {list(r.removing)}")

    def _cancel(self, cluster: str, options) -> None:
        actor, reason = self.acting(options, role=Role.ADMIN)
        after = services.reassignment_cancel(actor=actor, cluster=cluster, topic=options["topic"], reason=reason)
        self.stdout.write(f"Cancelled; replicas now {json.dumps(after['placement'])}")

    def _finish(self, cluster: str, options) -> None:
        actor, reason = self.acting(options, role=Role.ADMIN, reason_required=False)
        services.reassignment_finish(actor=actor, cluster=cluster, topic=options["topic"],
                                     reason=reason or "reassignment complete")
        self.stdout.write("Throttle removed.")
