from django.db import models


class AppliedConfig(models.Model):
    """A configuration file as `config apply` applied it to a cluster: the drift page compares the cluster with
    the newest one."""

    cluster = models.CharField(max_length=100, db_index=True)
    text = models.TextField()  # the YAML as it was given
    digest = models.CharField(max_length=64)  # SHA-256 of the text
    plan_fingerprint = models.CharField(max_length=64)
    allow_deletes = models.BooleanField(default=False)
    change_set = models.UUIDField()  # the audit rows of the apply name it (params["change_set"])
    applied_at = models.DateTimeField()
    applied_by = models.CharField(max_length=150)
    changes = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-applied_at", "-pk"]
