"""Imports started from the page: the file waits in IMPORT_DIR while a Celery worker writes it, and this row says
how far it got, so the page can show progress and a killed worker cannot leave an import "running" forever."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ImportJob(models.Model):
    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    cluster = models.CharField(max_length=63)
    topic = models.CharField(max_length=249)
    kind = models.CharField(max_length=8)  # jsonl or csv
    file_name = models.CharField(max_length=255)  # as uploaded: shown and audited, never opened
    path = models.CharField(max_length=500)  # where the upload waits (IMPORT_DIR/<random>.upload); removed after
    size = models.BigIntegerField(default=0)
    params = models.JSONField(default=dict)  # rate, skip_bad, key_subject, value_subject
    reason = models.TextField(blank=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    actor_name = models.CharField(max_length=150)
    remote_addr = models.GenericIPAddressField(null=True)
    state = models.CharField(max_length=8, choices=State.choices, default=State.QUEUED)
    report = models.JSONField(default=dict)  # ImportReport.as_json(), updated after every batch
    error = models.TextField(blank=True)
    correlation_id = models.UUIDField(null=True)  # the import's audit events
    cancelled_by = models.CharField(max_length=150, blank=True)  # who asked it to stop; the worker stops at a batch
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True)
    heartbeat_at = models.DateTimeField(null=True)  # every few seconds while a worker runs it
    finished_at = models.DateTimeField(null=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["state"]), models.Index(fields=["cluster", "topic", "-created_at"])]

    @property
    def percent(self) -> int:
        """How much of the file was read, 0 to 100."""
        return 100 if self.state == self.State.DONE else min(99, int(100 * self.report.get("bytes_read", 0)
                                                                      / max(1, self.size)))

    @property
    def finished(self) -> bool:
        return self.state in (self.State.DONE, self.State.FAILED)

    def __str__(self) -> str:
        return f"import #{self.pk} of {self.file_name} into {self.cluster}/{self.topic} ({self.state})"


class SavedFilter(models.Model):
    """A person's named view of the message browser on one cluster: the topic and the browser's query string (its
    filters). Personal page state, like a bookmark: it changes nothing in Kafka, so it has no audit event."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    cluster = models.CharField(max_length=63)
    topic = models.CharField(max_length=249)
    name = models.CharField(max_length=80)
    query = models.CharField(max_length=4000, blank=True)  # only the browser's own parameters (browse_forms)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["user", "cluster", "name"], name="saved_filter_name_once")]

    def __str__(self) -> str:
        return f"{self.name} ({self.cluster}/{self.topic})"
