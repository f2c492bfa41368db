"""Four-eyes changes from the shell: list and show change requests, approve, reject or break the glass; protect a
cluster (all of it or topics and groups by pattern) and end its protection. The same services as the pages; the
role of the change is checked here, and again by the service."""

from __future__ import annotations

import json

from django.utils import timezone

from changes import selectors, services, states
from changes.serializers import change_json
from console.accounts.commands import ActorCommand
from console.accounts.roles import Role


class Command(ActorCommand):
    help = __doc__

    def add_arguments(self, parser):
        sub = self.add_subcommands(parser, cluster=False)
        listing = sub.add_parser("list", help="change requests, newest first (default: the pending ones)")
        listing.add_argument("--status", default="pending", choices=["all", *states.STATUSES])
        self.add_cluster_argument(listing, default="", help="only this cluster's (default: every cluster)")
        self.add_format_argument(listing)
        show = sub.add_parser("show", help="one request: its plan, reason, requester and approvals")
        show.add_argument("id", type=int)
        self.add_format_argument(show)
        for name, text in (("approve", "approve a request (the last approval needed executes it)"),
                           ("reject", "reject a request (or withdraw your own)"),
                           ("break-glass", "admins: execute a pending request now, without approval (alerted)")):
            decide = sub.add_parser(name, help=text)
            decide.add_argument("id", type=int)
            self.add_actor_arguments(decide)
            self.add_format_argument(decide)
        protect = sub.add_parser("protect", help="protect a cluster: its changes need a second person (admins)")
        self.add_cluster_argument(protect)
        protect.add_argument("--topic-pattern", action="append", default=[], metavar="GLOB|re:REGEX",
                             help="protect only the topics it matches (repeat for more)")
        protect.add_argument("--group-pattern", action="append", default=[], metavar="GLOB|re:REGEX",
                             help="protect only the groups it matches (repeat for more)")
        protect.add_argument("--approvals", type=int, help="approvals a request needs (default CHANGE_APPROVALS)")
        protect.add_argument("--webhook", default="", help="a channel of CONSOLE_ALERT_WEBHOOKS told of requests")
        self.add_actor_arguments(protect)
        unprotect = sub.add_parser("unprotect", help="end a cluster's protection (admins)")
        self.add_cluster_argument(unprotect)
        self.add_actor_arguments(unprotect)

    def handle(self, *args, **options):
        getattr(self, "do_" + options["subcommand"].replace("-", "_"))(options)

    def _emit(self, options, data, lines: list[str]) -> None:
        if options.get("format") == "json":
            self.stdout.write(json.dumps(data, indent=2))
        else:
            for line in lines:
                self.stdout.write(line)

    def do_list(self, options):
        status = "" if options["status"] == "all" else options["status"]
        rows = selectors.change_requests(status=status, cluster=options["cluster"])
        now = timezone.now()
        lines = [f"{'ID':>5} {'STATUS':<9} {'CLUSTER':<12} {'ACTION':<22} {'ASKED-BY':<12} {'AGE':>8} "
                 f"{'APPROVALS':>9}  TARGET"]
        for change in rows:
            age = int((now - change.requested_at).total_seconds() // 60)
            lines.append(f"{change.pk:>5} {selectors.status_now(change):<9} {change.cluster:<12} "
                         f"{change.action:<22} {change.requested_by_name:<12} {age:>6}m "
                         f"{change.approvals.count():>4} of {change.approvals_required:<2}  {change.target}")
        self._emit(options, [change_json(c, plan=False) for c in rows], lines)

    def _lines(self, change) -> list[str]:
        data = change_json(change)
        lines = [f"Change request #{change.pk}: {change.action} of {change.target} on {change.cluster}",
                 f"Status: {data['status']}" + (" (break-glass)" if change.break_glass else ""),
                 f"Asked by {change.requested_by_name} at {change.requested_at:%Y-%m-%d %H:%M:%S} UTC: {change.reason}",
                 f"Expires: {change.expires_at:%Y-%m-%d %H:%M:%S} UTC",
                 f"Approvals: {len(data['approvals'])} of {change.approvals_required}"
                 + "".join(f"\n  {a['by']} at {a['at']}" for a in data["approvals"])]
        if change.error:
            lines.append(f"Why not: {change.error}")
        lines.append("Plan: " + json.dumps(change.plan, indent=2))
        return lines

    def do_show(self, options):
        change = services.change_request_get(options["id"])
        self._emit(options, change_json(change), self._lines(change))

    def do_approve(self, options):
        actor, reason = self.acting(options, role=Role.OPERATOR, reason_required=False)
        change = services.change_request_approve(actor=actor, request_id=options["id"], reason=reason)
        self._emit(options, change_json(change), [f"Change request #{change.pk} approved: it is {change.status}."])

    def do_reject(self, options):
        actor, reason = self.acting(options, role=Role.OPERATOR)
        change = services.change_request_reject(actor=actor, request_id=options["id"], reason=reason)
        self._emit(options, change_json(change), [f"Change request #{change.pk} rejected: nothing was changed."])

    def do_break_glass(self, options):
        actor, reason = self.acting(options, role=Role.ADMIN)
        change = services.change_request_break_glass(actor=actor, request_id=options["id"], reason=reason)
        self._emit(options, change_json(change),
                   [f"BREAK-GLASS: change request #{change.pk} is {change.status}; audited and alerted."])

    def do_protect(self, options):
        actor, reason = self.acting(options, role=Role.ADMIN)
        patterns = options["topic_pattern"] or options["group_pattern"]
        services.protection_set(actor=actor, cluster=options["cluster"], whole_cluster=not patterns,
                                topic_patterns=options["topic_pattern"], group_patterns=options["group_pattern"],
                                approvals=options["approvals"], webhook=options["webhook"], reason=reason)
        what = "the topics and groups its patterns match" if patterns else "the whole cluster"
        self.stdout.write(f"Cluster {options['cluster']} is protected ({what}): its changes need a second person.")

    def do_unprotect(self, options):
        actor, reason = self.acting(options, role=Role.ADMIN)
        services.protection_clear(actor=actor, cluster=options["cluster"], reason=reason)
        self.stdout.write(f"Cluster {options['cluster']} is no longer protected.")
