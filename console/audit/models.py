"""The audit log: append-only rows chained by a keyed hash (see console/audit/chain.py)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class AppendOnlyError(Exception):
    pass


MSG_APPEND_ONLY = "Audit events are append-only: they cannot be changed or deleted."


class AuditEventQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AppendOnlyError(MSG_APPEND_ONLY)

    def delete(self):
        raise AppendOnlyError(MSG_APPEND_ONLY)

    def bulk_update(self, *args, **kwargs):
        raise AppendOnlyError(MSG_APPEND_ONLY)


class AuditEvent(models.Model):
    class Source(models.TextChoices):
        WEB = "web"
        CLI = "cli"
        API = "api"  # a program with an API token (console/tokens), acting as the token's owner
        MCP = "mcp"  # an assistant through the MCP server, with an API token
        SYSTEM = "system"

    class Outcome(models.TextChoices):
        INTENT = "intent"
        SUCCESS = "success"
        FAILURE = "failure"
        REFUSED = "refused"

    seq = models.PositiveBigIntegerField(unique=True, editable=False)
    created_at = models.DateTimeField(db_index=True, editable=False)
    # PROTECT: deleting a user would otherwise rewrite their audit rows; deactivate users instead.
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    actor_name = models.CharField(max_length=150, db_index=True)
    source = models.CharField(max_length=10, choices=Source.choices)
    remote_addr = models.GenericIPAddressField(null=True, blank=True)
    cluster = models.CharField(max_length=100, blank=True, db_index=True)
    action = models.CharField(max_length=100, db_index=True)
    target = models.CharField(max_length=600, blank=True, db_index=True)  # kind:name, names up to 500
    reason = models.TextField(blank=True)
    params = models.JSONField(default=dict, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    outcome = models.CharField(max_length=10, choices=Outcome.choices)
    error = models.TextField(blank=True)
    correlation_id = models.UUIDField(default=uuid.uuid4, db_index=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["-seq"]
        indexes = [models.Index(fields=["cluster", "target", "-seq"])]

    def __str__(self) -> str:
        return f"#{self.seq} {self.action} {self.target} {self.outcome}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise AppendOnlyError(MSG_APPEND_ONLY)
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError(MSG_APPEND_ONLY)


class WitnessState(models.Model):
    """How far the witness topic reached when the publisher last read it. The topic is the truth (the publisher
    reads its last record before every batch); this row lets the audit page and /health answer without Kafka."""

    cluster = models.CharField(max_length=100)
    topic = models.CharField(max_length=255)
    published_seq = models.PositiveBigIntegerField(default=0)  # the seq of the topic's last committed record
    published_at = models.DateTimeField(null=True)  # when this console last committed a batch to the topic
    attempted_at = models.DateTimeField(null=True)  # the last publishing round, whatever came of it
    error = models.TextField(blank=True)  # why the last round could not publish (Kafka down...); empty when it could
    # The first row the publisher refused because it does not continue the published chain (forged, altered, or
    # a row before it missing); publishing stops there until the database is repaired.
    blocked_seq = models.PositiveBigIntegerField(null=True)
    blocked_reason = models.TextField(blank=True)
    # The high-water mark: the highest seq ever seen on the topic, its hash and offset, and the topic's id. It only
    # rises (console.witness.loss), so a topic that later holds less (purged, deleted, re-created) is caught
    # instead of being filled again from #1. high_offset None: nothing seen on this topic since the last reset.
    high_seq = models.PositiveBigIntegerField(default=0)
    high_hash = models.CharField(max_length=64, blank=True)
    high_offset = models.BigIntegerField(null=True)
    topic_id = models.CharField(max_length=64, blank=True)
    # Events up to this seq are accepted as no longer witnessed (audit_witness_reset); 0: none.
    accepted_through = models.PositiveBigIntegerField(default=0)
    # The alarm: set when the topic lost published records, cleared only by audit_witness_reset. Publishing stops.
    lost_at = models.DateTimeField(null=True)
    lost_first_seq = models.PositiveBigIntegerField(null=True)
    lost_last_seq = models.PositiveBigIntegerField(null=True)
    lost_reason = models.TextField(blank=True)

    @property
    def lost(self) -> bool:
        return self.lost_at is not None

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "topic"], name="witness_state_unique")]


class AuditCheck(models.Model):
    """One run of audit_verify: the database chain, and the database against the witness topic."""

    checked_at = models.DateTimeField(db_index=True)
    ok = models.BooleanField()
    events = models.PositiveBigIntegerField(default=0)
    chain_problems = models.JSONField(default=list)  # messages of console.audit.chain.verify_chain
    witness_cluster = models.CharField(max_length=100, blank=True)  # empty: no witness configured
    witness_topic = models.CharField(max_length=255, blank=True)
    witness_records = models.PositiveBigIntegerField(default=0)
    witness_first_seq = models.PositiveBigIntegerField(null=True)
    witness_last_seq = models.PositiveBigIntegerField(null=True)
    unpublished = models.PositiveBigIntegerField(default=0)
    # [{"kind": ..., "ranges": [[first, last], ...], "message": ...}] (console.witness.compare.Finding)
    findings = models.JSONField(default=list)
    witness_error = models.TextField(blank=True)  # the topic could not be read

    class Meta:
        ordering = ["-checked_at", "-pk"]

    @property
    def problem_count(self) -> int:
        return len(self.chain_problems) + len(self.findings) + (1 if self.witness_error else 0)
