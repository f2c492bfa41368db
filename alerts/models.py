"""Alert rules, silences, and the alerts they open: what the sampler and recorder already know, brought to people."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from alerts.broker_conditions import BROKER_KINDS
from alerts.links import alert_path
from offsets.models import GROUP_ID_MAX_STORED


class AlertRule(models.Model):
    class Kind(models.TextChoices):
        STATUS = "status", "lag status for at least N minutes"
        LAG = "lag", "total lag above a threshold for at least N minutes"
        REBALANCES = "rebalances", "at least N rebalances within M minutes"
        SAMPLER = "sampler", "lag sampler without a successful sweep for N minutes"
        RECORDER = "recorder", "rebalance recorder behind or stopped for N minutes"
        CONNECTOR = "connector", "connector or task FAILED (or not RUNNING) for N minutes"
        CLASSIC_PROTOCOL = "classic_protocol", "a group still on the classic rebalance protocol for N minutes"
        UNDER_REPLICATED = "under_replicated", "under-replicated partitions above a threshold (0) for N minutes"
        UNDER_MIN_ISR = "under_min_isr", "partitions under their min ISR above a threshold (0) for N minutes"
        OFFLINE = "offline", "offline partitions for N minutes"
        NO_CONTROLLER = "no_controller", "no active controller for N minutes"
        IDLE = "idle", "a broker's request handlers or network idle below threshold % for N minutes"
        P99_LATENCY = "p99_latency", "a broker's Produce or Fetch p99 above threshold ms for N minutes"
        RETENTION = "retention", "a partition at threshold % (90) or more of its retention.bytes for N minutes"

    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    cluster = models.CharField(max_length=63, blank=True)  # blank: every registered cluster
    # shell-style (fnmatch), exact case: group ids, connector names for a connector rule, topics for a retention rule
    group_pattern = models.CharField(max_length=GROUP_ID_MAX_STORED, default="*")
    # kind status: e.g. ["ERR", "STOP"]; kind connector: ["FAILED"] or ["NOT_RUNNING"]
    statuses = models.JSONField(default=list, blank=True)
    for_minutes = models.PositiveIntegerField(default=0)
    # kind lag: records; kind rebalances: count; kind retention: percent of retention.bytes
    threshold = models.BigIntegerField(null=True, blank=True)
    window_minutes = models.PositiveIntegerField(null=True, blank=True)  # kind rebalances
    webhook = models.CharField(max_length=100, blank=True)  # a channel name from CONSOLE_ALERT_WEBHOOKS
    emails = models.JSONField(default=list, blank=True)
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def condition(self) -> str:
        """The rule in words, for the page and the shell."""
        held = f" for {self.for_minutes} min" if self.for_minutes else ""
        if self.kind == self.Kind.STATUS:
            return f"status {' or '.join(self.statuses)}{held}"
        if self.kind == self.Kind.LAG:
            return f"total lag above {self.threshold:,}{held}"
        if self.kind == self.Kind.REBALANCES:
            return f"at least {self.threshold} rebalances within {self.window_minutes} min"
        if self.kind == self.Kind.CLASSIC_PROTOCOL:
            return f"still on the classic rebalance protocol{held}"
        if self.kind == self.Kind.CONNECTOR:
            what = "not RUNNING" if "NOT_RUNNING" in self.statuses else "FAILED"
            return f"connector or task {what}{held}"
        if self.kind == self.Kind.RETENTION:
            return f"a partition at {self.threshold} % or more of its retention.bytes{held}"
        if self.kind in BROKER_KINDS:
            return {"idle": f"request handlers or network idle below {self.threshold} %",
                    "p99_latency": f"Produce or consumer Fetch p99 above {self.threshold} ms",
                    "no_controller": "no active controller", "offline": "offline partitions"}.get(
                self.kind, f"{self.kind.replace('_', ' ')} partitions above {self.threshold or 0}") + held
        if self.kind == self.Kind.SAMPLER:
            return f"no successful lag sweep for {self.for_minutes or 'a few'} min"
        return f"recorder stopped or behind for {self.for_minutes or 3} min"

    @property
    def channels(self) -> str:
        return ", ".join(([f"webhook {self.webhook}"] if self.webhook else []) + list(self.emails))


class Silence(models.Model):
    """While it lasts, matching alerts still open and resolve, but nobody is notified; an alert still firing when
    the silence ends is sent then."""

    rule = models.ForeignKey(AlertRule, null=True, blank=True, on_delete=models.CASCADE)  # null: every rule
    cluster = models.CharField(max_length=63, blank=True)
    group_pattern = models.CharField(max_length=GROUP_ID_MAX_STORED, default="*")
    ends_at = models.DateTimeField(db_index=True)
    reason = models.TextField()
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-ends_at"]


class Alert(models.Model):
    """One condition of one rule on one group (or cluster): pending until it has held for the rule's minutes,
    then firing (notified once), then resolved (notified once). At most one unresolved alert per rule and group,
    so a group that stays stalled never sends a second message."""

    PENDING, FIRING, RESOLVED = "pending", "firing", "resolved"

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="alerts")
    cluster = models.CharField(max_length=63)
    # blank for sampler and recorder rules; CONNECT/CONNECTOR (a Connect cluster's name has no '/') for connector rules
    group = models.CharField(max_length=GROUP_ID_MAX_STORED, blank=True)
    state = models.CharField(max_length=10, default=PENDING)
    reason = models.TextField()
    since = models.DateTimeField()  # the condition first held
    fired_at = models.DateTimeField(null=True)
    resolved_at = models.DateTimeField(null=True)
    # {"webhook": iso time, "email": iso time} per channel that took the firing / the resolved message, so a
    # channel that failed is retried without sending twice on the one that worked.
    sent_firing = models.JSONField(default=dict)
    sent_resolved = models.JSONField(default=dict)
    delivery_error = models.TextField(blank=True)

    @property
    def path(self) -> str:
        """The page of the alert's subject (its group, connector, broker or cluster)."""
        return alert_path(self.rule.kind, self.cluster, self.group)

    class Meta:
        ordering = ["-since", "-id"]
        indexes = [models.Index(fields=["state", "resolved_at"])]
        constraints = [models.UniqueConstraint(fields=["rule", "cluster", "group"], condition=~Q(state="resolved"),
                                               name="one_open_alert_per_rule_and_group")]
