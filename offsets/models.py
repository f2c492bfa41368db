from django.db import models


class RecorderPosition(models.Model):
    """Where the recorder goes on in one `__consumer_offsets` partition; saved with the rows it derived."""

    cluster = models.CharField(max_length=63)
    partition = models.IntegerField()
    next_offset = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "partition"], name="recorder_position_unique")]


class ConsumerGroupState(models.Model):
    """A KIP-848 group's members and target assignment as the records built them up (the recorder's memory)."""

    cluster = models.CharField(max_length=63)
    group = models.CharField(max_length=255)
    state = models.JSONField(default=dict)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "group"], name="consumer_group_state_unique")]


class GroupGeneration(models.Model):
    """One generation (classic) or assignment epoch (consumer protocol) of a group: who was in it, with what."""

    cluster = models.CharField(max_length=63)
    group = models.CharField(max_length=255, db_index=True)
    protocol = models.CharField(max_length=10)  # classic or consumer
    generation = models.IntegerField()  # classic generation id, or the consumer group's assignment epoch
    time = models.DateTimeField()
    assignor = models.CharField(max_length=100, blank=True)
    leader = models.CharField(max_length=255, blank=True)
    # [{"member_id", "client_id", "host", "instance_id", "assignment": [[topic, partition], ...]}]
    members = models.JSONField(default=list)
    sampled = models.BooleanField(default=False)  # from polling DescribeGroups, not from the internal topic

    class Meta:
        ordering = ["time", "id"]
        indexes = [models.Index(fields=["cluster", "group", "time"])]
        constraints = [models.UniqueConstraint(fields=["cluster", "group", "protocol", "generation", "sampled"],
                                               name="group_generation_unique")]


class GroupCommitStat(models.Model):
    """Last offset commit seen per group, from the commit records (lag status uses it: no commits means STOP)."""

    cluster = models.CharField(max_length=63)
    group = models.CharField(max_length=255)
    last_commit_at = models.DateTimeField()
    commits = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "group"], name="group_commit_stat_unique")]
