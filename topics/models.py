from django.db import models


class TopicPolicy(models.Model):
    """What a cluster's topics must look like; enforced on create, config and partition changes (topics/policies).
    Config rules are stored as written rules ({"config", "op", "value", "message"}), read by topics.policies.rules."""

    cluster = models.CharField(max_length=63, db_index=True)
    name = models.CharField(max_length=100)
    applies_to = models.CharField(max_length=1000, blank=True)
    name_pattern = models.CharField(max_length=1000, blank=True)
    name_message = models.CharField(max_length=500, blank=True)
    min_partitions = models.PositiveIntegerField(null=True, blank=True)
    max_partitions = models.PositiveIntegerField(null=True, blank=True)
    partitions_message = models.CharField(max_length=500, blank=True)
    min_replication_factor = models.PositiveSmallIntegerField(null=True, blank=True)
    max_replication_factor = models.PositiveSmallIntegerField(null=True, blank=True)
    replication_message = models.CharField(max_length=500, blank=True)
    config_rules = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["cluster", "name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="topic_policy_unique_name")]

    def __str__(self) -> str:
        return f"{self.cluster}:{self.name}"
