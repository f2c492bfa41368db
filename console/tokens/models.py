"""API tokens: how programs (CI jobs, scripts, assistants through MCP) call the API as a person, with less power.

A token is shown once, when it is made; only its SHA-256 digest is kept (the secret is 32 random bytes, so a slow
password hash would add nothing). It acts as its owner with its own role as a ceiling, optionally only on some
clusters and only to read, until it expires or is revoked."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from console.accounts.roles import Role


class ApiToken(models.Model):
    class Kind(models.TextChoices):
        PERSONAL = "personal", "personal (a person's scripts)"
        SERVICE = "service", "service (a CI job, a bot, an assistant)"

    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.PERSONAL)
    # PROTECT: the audit log names the owner of every token that acted; deactivate people instead.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="api_tokens")
    role = models.PositiveSmallIntegerField()  # console.accounts.roles.Role: the ceiling of the owner's role
    clusters = models.JSONField(default=list, blank=True)  # names it may reach; empty: every cluster
    read_only = models.BooleanField(default=False)
    # Whether an assistant may execute a change it previewed through MCP (a reset, a replay); off by default.
    mcp_execute = models.BooleanField(default=False)
    prefix = models.CharField(max_length=16)  # the first characters, to recognise a token in a list or a log
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    last_used_from = models.GenericIPAddressField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…, {self.owner.get_username()})"

    def state(self, now=None) -> str:
        now = now or timezone.now()
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at <= now:
            return "expired"
        return "active"

    @property
    def role_name(self) -> str:
        return Role(self.role).group_name

    def reaches(self, cluster: str) -> bool:
        return not self.clusters or cluster in self.clusters
