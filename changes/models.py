"""Four-eyes changes: which clusters (or which of their topics and groups) are protected, and the change requests
that a change there becomes, with the approvals they collect."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from changes import states


class Protection(models.Model):
    """One cluster's protection. `whole_cluster`: every topic and group; otherwise the names that one of the patterns
    matches (changes/patterns.py)."""

    cluster = models.CharField(max_length=63, unique=True)
    whole_cluster = models.BooleanField(default=True)
    topic_patterns = models.JSONField(default=list, blank=True)
    group_patterns = models.JSONField(default=list, blank=True)
    approvals = models.PositiveSmallIntegerField(null=True, blank=True)  # None: CHANGE_APPROVALS
    webhook = models.CharField(max_length=100, blank=True)  # a channel of CONSOLE_ALERT_WEBHOOKS told of requests
    updated_by = models.CharField(max_length=150)
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["cluster"]

    def __str__(self) -> str:
        return self.cluster


class ChangeRequest(models.Model):
    """A change asked for on a protected target: the service's action and keyword arguments (JSON) to run it again,
    the plan as previewed and its fingerprint, who asked and why."""

    Status = models.TextChoices("Status", [(s, s) for s in states.STATUSES])

    cluster = models.CharField(max_length=63, db_index=True)
    action = models.CharField(max_length=100)  # a key of changes.registry
    target = models.CharField(max_length=600)  # kind:name, as the audit log names it
    kwargs = models.JSONField()
    plan = models.JSONField()
    fingerprint = models.CharField(max_length=64)
    reason = models.TextField()
    # PROTECT, as the audit log's actor: deactivate people instead of deleting them.
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    requested_by_name = models.CharField(max_length=150)
    requested_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)
    approvals_required = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(max_length=10, choices=Status.choices, default=states.PENDING, db_index=True)
    # The audit rows of the request, its approvals and its execution name it (the request's own row as its
    # correlation id, the others as params["change_set"]).
    correlation_id = models.UUIDField(default=uuid.uuid4, unique=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by_name = models.CharField(max_length=150, blank=True)
    decision_reason = models.TextField(blank=True)
    break_glass = models.BooleanField(default=False)
    result = models.JSONField(null=True, blank=True)  # what the service read back
    error = models.TextField(blank=True)  # why it was refused or failed
    notify_error = models.TextField(blank=True)  # a channel that did not take the message

    class Meta:
        ordering = ["-requested_at", "-pk"]

    def __str__(self) -> str:
        return f"#{self.pk} {self.action} {self.target} {self.status}"

    @property
    def target_name(self) -> str:
        return self.target.partition(":")[2]


class ChangeApproval(models.Model):
    request = models.ForeignKey(ChangeRequest, on_delete=models.PROTECT, related_name="approvals")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    user_name = models.CharField(max_length=150)
    approved_at = models.DateTimeField()
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["approved_at", "pk"]
        constraints = [models.UniqueConstraint(fields=["request", "user"], name="one_approval_per_person")]
