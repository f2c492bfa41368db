from django.conf import settings
from django.db import models


class ReplayJob(models.Model):
    """One replay: a concrete offset range of one topic, written to a sink by a PySpark application."""

    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        CANCELLED = "cancelled"

    class Sink(models.TextChoices):
        TOPIC = "topic"
        PARQUET = "parquet"
        JSONL = "jsonl"

    class Isolation(models.TextChoices):
        READ_COMMITTED = "read_committed", "read_committed (what correct consumers saw)"
        READ_UNCOMMITTED = "read_uncommitted", "read_uncommitted (forensics: includes aborted records)"

    FINISHED = (State.SUCCEEDED, State.FAILED, State.CANCELLED)

    cluster = models.CharField(max_length=63)
    topic = models.CharField(max_length=249)
    start_spec = models.CharField(max_length=300, help_text="what the person asked for, e.g. timestamp:2026-…")
    end_spec = models.CharField(max_length=300)
    # Concrete per-partition bounds resolved at submit: {"0": [start, end_exclusive], ...}
    ranges = models.JSONField()
    planned_records = models.BigIntegerField()
    filter_expr = models.TextField(blank=True)
    # The masking rules that applied to the person who submitted it (masking.mask_rules.Rule as dicts): the
    # job's files are masked for them as a page would be.
    masking = models.JSONField(default=list, blank=True)
    # read_committed skips aborted transactions and ends "latest" at the last stable offset.
    isolation = models.CharField(max_length=16, choices=Isolation.choices, default=Isolation.READ_COMMITTED)
    sink = models.CharField(max_length=10, choices=Sink.choices)
    sink_topic = models.CharField(max_length=249, blank=True)
    sink_cluster = models.CharField(max_length=63, blank=True)
    keep_partitions = models.BooleanField(default=False)
    output_dir = models.CharField(max_length=500, blank=True)

    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED, db_index=True)
    cancel_requested = models.BooleanField(default=False)
    progress_done = models.BigIntegerField(default=0)
    records_read = models.BigIntegerField(null=True, blank=True)
    records_written = models.BigIntegerField(null=True, blank=True)
    # Offsets of the range that held no record to replay: aborted transactional records (skipped under
    # read_committed) and transaction markers (never records).
    records_aborted = models.BigIntegerField(null=True, blank=True)
    transaction_markers = models.BigIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    log_path = models.CharField(max_length=500, blank=True)
    reason = models.TextField(blank=True)
    correlation_id = models.UUIDField(null=True, blank=True)

    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # Written every second by the worker watching the Spark driver; a running job whose heartbeat stops had its
    # worker die (sparkjobs.services.replay_reap_orphans then fails it and stops the driver).
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    driver_pid = models.IntegerField(null=True, blank=True)  # spark-submit's process (and session) id
    worker_host = models.CharField(max_length=255, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"replay #{self.pk} {self.topic} → {self.sink}"

    @property
    def finished(self) -> bool:
        return self.state in self.FINISHED

    @property
    def offsets_summary(self) -> str:
        """"116 offsets in the range: 80 records replayed, 30 aborted, 6 transaction markers"."""
        if self.records_read is None:
            return ""
        parts = [f"{self.records_read} record{'s' if self.records_read != 1 else ''} read"]
        if self.records_written is not None and self.records_written != self.records_read:
            parts.append(f"{self.records_written} passed the filter")
        if self.records_aborted:
            parts.append(f"{self.records_aborted} aborted (skipped)")
        if self.transaction_markers:
            parts.append(f"{self.transaction_markers} transaction marker{'s' if self.transaction_markers != 1 else ''}")
        if self.isolation == self.Isolation.READ_UNCOMMITTED:
            parts.append("records of aborted transactions included (read_uncommitted)")
        return f"{self.planned_records} offsets in the range: " + ", ".join(parts)

    @property
    def progress_percent(self) -> int:
        if not self.planned_records:
            return 100 if self.finished else 0
        return min(100, int(100 * self.progress_done / self.planned_records))
