from django.db import models


def default_roles() -> list[str]:
    return ["viewer", "operator"]  # everyone below admin


class MaskRule(models.Model):
    """A masking rule of one cluster: which topics (an RE2 pattern over the whole name), which part of a record,
    what to do to it, and the roles it applies to. Created and deleted through masking.services (audited)."""

    class Selector(models.TextChoices):
        JSONPATH = "jsonpath", "field of the decoded value (JSON path)"
        KEY = "key", "the key"
        HEADER = "header", "a header, by name"
        REGEX = "regex", "a regular expression over the text shown"

    class Action(models.TextChoices):
        HIDE = "hide", "hide"
        REPLACE = "replace", "replace with a fixed text"
        KEEP_LAST = "keep_last", "keep the last N characters"
        HASH = "hash", "hash (HMAC-SHA256 with the console's key)"

    cluster = models.CharField(max_length=200, db_index=True)
    topic_pattern = models.CharField(max_length=1000)
    selector = models.CharField(max_length=20, choices=Selector.choices)
    target = models.CharField(max_length=1000, blank=True)
    action = models.CharField(max_length=20, choices=Action.choices, default=Action.HIDE)
    replacement = models.CharField(max_length=200, blank=True)
    keep_last = models.PositiveSmallIntegerField(default=4)
    roles = models.JSONField(default=default_roles)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by_name = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["cluster", "id"]

    def __str__(self) -> str:
        return f"{self.cluster}: {self.topic_pattern} {self.selector} {self.target} -> {self.action}"
