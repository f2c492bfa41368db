from django.db import models


# Kafka puts no practical limit on a group id; the console stores history and lag for ids up to this long (an
# index over longer text would exceed PostgreSQL's row limit). Longer ids are shown live and skipped in storage.
GROUP_ID_MAX_STORED = 500

class RecorderPosition(models.Model):
    """Where the recorder goes on in one `__consumer_offsets` partition; saved with the rows it derived."""

    cluster = models.CharField(max_length=63)
    partition = models.IntegerField()
    next_offset = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "partition"], name="recorder_position_unique")]


class RecorderStatus(models.Model):
    """How the recorder of one cluster is doing, so pages can say "recorded up to 12 s ago" or why not."""

    RECORDING, SAMPLING, WAITING, STOPPED = "recording", "sampling", "waiting", "stopped"

    cluster = models.CharField(max_length=63, unique=True)
    state = models.CharField(max_length=16, default=WAITING)
    detail = models.TextField(blank=True)
    # The time up to which history is complete: "now" of the last poll that found the internal topic read to
    # its end, or of the last sampling round.
    recorded_up_to = models.DateTimeField(null=True)
    # Offsets of `__consumer_offsets` not read yet, summed over its partitions, as of the last time the recorder
    # compared its positions with their ends (null until it first did): /metrics reports it.
    behind_records = models.BigIntegerField(null=True)
    updated_at = models.DateTimeField()


class ConsumerGroupState(models.Model):
    """A KIP-848 group's members and target assignment as the records built them up (the recorder's memory)."""

    cluster = models.CharField(max_length=63)
    group = models.CharField(max_length=GROUP_ID_MAX_STORED)
    state = models.JSONField(default=dict)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "group"], name="consumer_group_state_unique")]


class GroupGeneration(models.Model):
    """One generation (classic) or assignment epoch (consumer protocol) of a group: who was in it, with what."""

    cluster = models.CharField(max_length=63)
    group = models.CharField(max_length=GROUP_ID_MAX_STORED, db_index=True)
    protocol = models.CharField(max_length=10)  # classic or consumer
    generation = models.IntegerField()  # classic generation id, or the consumer group's assignment epoch
    time = models.DateTimeField()
    assignor = models.CharField(max_length=100, blank=True)
    leader = models.CharField(max_length=255, blank=True)
    # [{"member_id", "client_id", "host", "instance_id", "assignment": [[topic, partition], ...]}]
    members = models.JSONField(default=list)
    sampled = models.BooleanField(default=False)  # from polling DescribeGroups, not from the internal topic
    # Consumer and share protocols: when every member reported this epoch reconciled (offsets/history/timeline.py).
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["time", "id"]
        indexes = [models.Index(fields=["cluster", "group", "time"])]
        constraints = [models.UniqueConstraint(fields=["cluster", "group", "protocol", "generation", "sampled"],
                                               name="group_generation_unique")]


class GroupCommitStat(models.Model):
    """Last offset commit seen per group, from the commit records (lag status uses it: no commits means STOP)."""

    cluster = models.CharField(max_length=63)
    group = models.CharField(max_length=GROUP_ID_MAX_STORED)
    last_commit_at = models.DateTimeField()
    commits = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "group"], name="group_commit_stat_unique")]


class LagSample(models.Model):
    """A group's lag on one topic at one time. step 0 is a raw sample; 300 and 3600 are 5-minute and hourly
    buckets rolled up from the finer step (time is then the bucket's start). Retention per step: settings.LAG_RETENTION_S."""

    cluster = models.CharField(max_length=63)
    group = models.CharField(max_length=GROUP_ID_MAX_STORED)
    topic = models.CharField(max_length=249)
    step = models.IntegerField()
    time = models.DateTimeField()
    lag = models.BigIntegerField()  # at the sample (raw) or at the bucket's last sample
    lag_max = models.BigIntegerField()
    committed = models.BigIntegerField()  # sum of committed offsets over the partitions with a commit
    end = models.BigIntegerField()  # sum of their log end offsets: deltas give consume and produce rates
    partitions = models.IntegerField()

    class Meta:
        indexes = [models.Index(fields=["cluster", "group", "step", "time"]),
                   models.Index(fields=["cluster", "topic", "step", "time"]),
                   models.Index(fields=["step", "time"])]
        constraints = [models.UniqueConstraint(fields=["cluster", "group", "topic", "step", "time"],
                                               name="lag_sample_unique")]


class GroupLagStatus(models.Model):
    """The latest Burrow-style status of a group, and the short per-partition window it was computed from."""

    cluster = models.CharField(max_length=63)
    group = models.CharField(max_length=GROUP_ID_MAX_STORED)
    status = models.CharField(max_length=8, blank=True)  # OK, WARN, ERR, STOP, or "" while collecting samples
    reason = models.TextField(blank=True)
    # The samples behind the status: offsets/lag/window.py's LagWindow, packed (LagWindow.to_bytes).
    window = models.BinaryField(default=b"")
    partition_status = models.JSONField(default=dict)  # {"topic-partition": status} for partitions not OK
    totals = models.JSONField(default=list)  # total lag at each sample of the window, for the list's sparkline
    # The sweep this status is from: a group a sweep skipped (out of time) keeps an older one.
    sampled_at = models.DateTimeField(null=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "group"], name="group_lag_status_unique")]

    @property
    def lag_window(self):
        from offsets.lag.window import LagWindow

        return LagWindow.from_bytes(self.window)


class LagSweep(models.Model):
    """How the lag sampler last went on a cluster, and how far each coarser step has been rolled up."""

    cluster = models.CharField(max_length=63, unique=True)
    last_ok_at = models.DateTimeField(null=True)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True)
    groups = models.IntegerField(default=0)
    partitions = models.IntegerField(default=0)
    duration_ms = models.IntegerField(default=0)
    rolled_until = models.JSONField(default=dict)  # {"300": epoch seconds, "3600": epoch seconds}
    # Groups the last successful sweep listed but did not sample (it ran out of time, or the cluster stopped
    # answering part-way), why, and the first few of them by name (the least urgent, see offsets/lag/priority.py).
    skipped_groups = models.IntegerField(default=0)
    skipped_reason = models.TextField(blank=True)
    skipped_sample = models.JSONField(default=list)
    # Set while a sweep of the cluster runs (offsets/lag/sampler.py lag_sweep_claim): a sweep that outlasts its
    # interval is not joined by the next one, which would ask the same cluster twice as hard.
    running_since = models.DateTimeField(null=True)
    # The last sweep whose listing named every group's type (offsets/protocols/observed.py): the earliest a change
    # of type seen by the next one can have happened.
    types_seen_at = models.DateTimeField(null=True)


class GroupTypeSeen(models.Model):
    """The type (classic, consumer, share, streams) each group had at the last lag sweep that listed it, and since
    which sweep: the rebalance protocol a group runs on, kept so that a change of it has a time."""

    cluster = models.CharField(max_length=63)
    group = models.CharField(max_length=GROUP_ID_MAX_STORED)
    group_type = models.CharField(max_length=16)
    simple = models.BooleanField(default=False)  # a classic group of committed offsets only, no protocol
    since = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "group"], name="group_type_seen_unique")]


class GroupTypeChange(models.Model):
    """A group seen with another type than at the sweep before (a move from classic to consumer, or back). The
    change happened after `previous_sweep_at` (the last sweep that saw the old type, when known) and before `at`."""

    cluster = models.CharField(max_length=63)
    group = models.CharField(max_length=GROUP_ID_MAX_STORED)
    before = models.CharField(max_length=16)
    after = models.CharField(max_length=16)
    at = models.DateTimeField()
    previous_sweep_at = models.DateTimeField(null=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["cluster", "at"]), models.Index(fields=["cluster", "group"])]
