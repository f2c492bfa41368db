"""Alert rules and silences from the shell: list, add, remove, silence, unsilence, and evaluate once (the worker
does that after every lag sweep)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from django.core.management.base import CommandError

from alerts import selectors, services
from alerts.evaluation import alerts_evaluate
from alerts.serializers import alerts_json
from alerts.models import AlertRule
from console.accounts.commands import ActorCommand
from console.accounts.roles import Role


def _when(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") if value else "-"


class Command(ActorCommand):
    help = __doc__

    def add_arguments(self, parser):
        # --cluster here names what a rule or silence covers, so its default is every cluster, not local.
        sub = self.add_subcommands(parser, cluster=False)
        listing = sub.add_parser("list", help="rules, open alerts and active silences")
        self.add_format_argument(listing, help="table or json")
        add = sub.add_parser("add", help="add a rule")
        add.add_argument("name")
        add.add_argument("--kind", required=True, choices=AlertRule.Kind.values)
        self.add_cluster_argument(add, default="", help="the cluster the rule covers (default: every cluster)")
        add.add_argument("--group", default="*", help="a group id or a pattern such as 'orders-*' (a connector rule: "
                                                      "connector names; a retention rule: topics)")
        add.add_argument("--status", action="append", default=[], help="WARN, BLOCKED, STOP or ERR (repeat, or "
                                                                       "comma-separated); a connector rule: FAILED "
                                                                       "or NOT_RUNNING")
        add.add_argument("--for-minutes", type=int, default=0, help="how long the condition must hold")
        add.add_argument("--threshold", type=int, help="lag in records (lag), rebalances (rebalances), idle %% (idle), "
                                                                    "p99 ms (p99_latency), partitions (under_*), %% "
                                                                    "of retention.bytes (retention; default 90)")
        add.add_argument("--window-minutes", type=int, help="the rebalance rule's window")
        add.add_argument("--webhook", default="", help="a channel named in CONSOLE_ALERT_WEBHOOKS")
        add.add_argument("--email", action="append", default=[], help="an address (repeat for more)")
        self.add_actor_arguments(add)
        remove = sub.add_parser("remove", help="remove a rule and its alerts")
        remove.add_argument("name")
        self.add_actor_arguments(remove)
        silence = sub.add_parser("silence", help="notify nobody of matching alerts for a while")
        silence.add_argument("--rule", default="", help="default: every rule")
        self.add_cluster_argument(silence, default="", help="the cluster silenced (default: every cluster)")
        silence.add_argument("--group", default="*")
        until = silence.add_mutually_exclusive_group(required=True)
        until.add_argument("--hours", type=float)
        until.add_argument("--until", help="an ISO date-time with its zone, e.g. 2026-11-24T07:00:00+01:00")
        self.add_actor_arguments(silence)
        unsilence = sub.add_parser("unsilence", help="end a silence now")
        unsilence.add_argument("id", type=int)
        self.add_actor_arguments(unsilence)
        sub.add_parser("evaluate", help="check every rule now and deliver what is due")

    def handle(self, *args, **options):
        getattr(self, "_" + options["subcommand"])(options)

    def _list(self, options):
        rules, alerts, silences = selectors.rules_list(), selectors.alerts_open(), selectors.silences_active()
        if options["format"] == "json":
            self.stdout.write(json.dumps(alerts_json(rules, alerts, silences), indent=2))
            return
        self.stdout.write("RULES")
        for r in rules:
            self.stdout.write(f"  {r.name}  [{r.cluster or 'every cluster'} / {r.group_pattern}]  {r.condition}  -> {r.channels}")
        self.stdout.write("OPEN ALERTS" + ("" if alerts else "  (none)"))
        for a in alerts:
            self.stdout.write(f"  {a.state.upper():8} {a.rule.name}  {a.cluster} {a.group or '-'}  since {_when(a.since)}: {a.reason}")
        self.stdout.write("SILENCES" + ("" if silences else "  (none)"))
        for s in silences:
            self.stdout.write(f"  #{s.pk} until {_when(s.ends_at)}  {s.rule.name if s.rule else 'every rule'} "
                              f"[{s.cluster or 'every cluster'} / {s.group_pattern}]: {s.reason}")

    def _add(self, options):
        actor, reason = self.acting(options, role=Role.OPERATOR, reason_required=False)
        statuses = [s for value in options["status"] for s in value.split(",")]
        rule = services.alert_rule_create(
            actor=actor, name=options["name"], kind=options["kind"], cluster=options["cluster"],
            group_pattern=options["group"], statuses=statuses, for_minutes=options["for_minutes"],
            threshold=options["threshold"], window_minutes=options["window_minutes"], webhook=options["webhook"],
            emails=options["email"], reason=reason)
        self.stdout.write(f"Alert rule {rule.name} added: {rule.condition} -> {rule.channels}.")

    def _remove(self, options):
        actor, reason = self.acting(options, role=Role.OPERATOR)
        services.alert_rule_remove(actor=actor, name=options["name"], reason=reason)
        self.stdout.write(f"Alert rule {options['name']} removed.")

    def _silence(self, options):
        actor, reason = self.acting(options, role=Role.OPERATOR)
        if options["hours"] is not None:
            ends_at = datetime.now(UTC) + timedelta(hours=options["hours"])
        else:
            try:
                ends_at = datetime.fromisoformat(options["until"])
            except ValueError as exc:
                raise CommandError(f"--until takes an ISO date-time, not '{options['until']}'.") from exc
            if ends_at.tzinfo is None:
                raise CommandError("--until needs its zone (e.g. +00:00 or Z), so nobody guesses which.")
        silence = services.alert_silence_create(actor=actor, ends_at=ends_at, reason=reason, rule=options["rule"],
                                                cluster=options["cluster"], group_pattern=options["group"])
        self.stdout.write(f"Silence #{silence.pk} until {_when(silence.ends_at)} UTC.")

    def _unsilence(self, options):
        actor, reason = self.acting(options, role=Role.OPERATOR)
        services.alert_silence_end(actor=actor, silence_id=options["id"], reason=reason)
        self.stdout.write(f"Silence #{options['id']} ended.")

    def _evaluate(self, options):
        result = alerts_evaluate()
        self.stdout.write(f"{result.opened} opened, {result.fired} fired, {result.resolved} resolved; "
                          f"{result.sent} sent, {result.failed} failed to send.")
