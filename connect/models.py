"""Connect clusters registered beside each Kafka cluster, and what the console has seen of their connectors:
the latest state of each (alerts and /metrics read it, never Connect) and the history of state changes."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from connect.endpoint_rules import RegistrationRefused, check_connect_registration, check_operator_allowlist
from console.clusters.models import name_validator
from offsets.models import GROUP_ID_MAX_STORED

RESERVED_NAMES = frozenset({"new", "bulk", "revert"})  # path segments of the Connect pages
CONNECTOR_NAME_MAX = GROUP_ID_MAX_STORED


class ConnectCluster(models.Model):
    """A Kafka Connect cluster (any of its workers' REST address) whose internal topics live on `cluster`.
    Secrets are never stored: the basic-auth password comes from an environment variable named here, TLS keys
    from files in CONSOLE_CLUSTER_CERT_DIRS."""

    cluster = models.CharField(max_length=63, db_index=True)  # the Kafka cluster's registered name
    name = models.CharField(max_length=63, validators=[name_validator])
    url = models.CharField(max_length=1000)
    username = models.CharField(max_length=255, blank=True)
    password_env = models.CharField(max_length=255, blank=True)
    ca_file = models.CharField(max_length=1000, blank=True)
    cert_file = models.CharField(max_length=1000, blank=True)
    key_file = models.CharField(max_length=1000, blank=True)
    description = models.CharField(max_length=300, blank=True)
    # What operators may write in connectors here (connect/operator_rules.py); admins are not bound by it. Empty:
    # every plugin is for admins only, and no setting naming a file is allowed to operators.
    operator_plugins = models.JSONField(default=list, blank=True)  # connector classes
    operator_settings = models.JSONField(default=list, blank=True)  # setting names beyond Kafka's basic ones
    file_dirs = models.JSONField(default=list, blank=True)  # folders on the worker's host for connectors' files
    created_at = models.DateTimeField(auto_now_add=True)
    # connectors_observe (connect/observe.py): when the cluster last answered, and why the last look failed if it did.
    observed_at = models.DateTimeField(null=True, blank=True)
    observe_error = models.TextField(blank=True)

    class Meta:
        ordering = ["cluster", "name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="connect_cluster_unique")]

    def __str__(self) -> str:
        return f"{self.cluster}/{self.name}"

    def clean(self) -> None:
        if self.name in RESERVED_NAMES:
            raise ValidationError({"name": f"'{self.name}' is reserved for the console's own pages."})
        try:
            check_connect_registration(url=self.url, username=self.username, password_env=self.password_env,
                                       ca_file=self.ca_file, cert_file=self.cert_file, key_file=self.key_file)
            check_operator_allowlist(plugins=self.operator_plugins, setting_names=self.operator_settings,
                                     file_dirs=self.file_dirs)
        except RegistrationRefused as exc:
            raise ValidationError({exc.field: exc.message}) from exc


class ConnectorSnapshot(models.Model):
    """A connector as the console last saw it; `since` is when its state (or a task's) last changed."""

    cluster = models.CharField(max_length=63)
    connect = models.CharField(max_length=63)
    connector = models.CharField(max_length=CONNECTOR_NAME_MAX)
    type = models.CharField(max_length=16)
    plugin = models.CharField(max_length=300, blank=True)
    state = models.CharField(max_length=16)
    worker_id = models.CharField(max_length=300, blank=True)
    trace = models.TextField(blank=True)
    tasks = models.JSONField(default=list)  # [{"id", "state", "worker_id", "trace"}]
    since = models.DateTimeField()
    seen_at = models.DateTimeField()

    class Meta:
        ordering = ["cluster", "connect", "connector"]
        constraints = [models.UniqueConstraint(fields=["cluster", "connect", "connector"],
                                               name="connector_snapshot_unique")]


class ConnectorEvent(models.Model):
    """One change of a connector's or a task's state, as the console saw it (an observation, or a change the
    console made itself, with its actor)."""

    cluster = models.CharField(max_length=63)
    connect = models.CharField(max_length=63)
    connector = models.CharField(max_length=CONNECTOR_NAME_MAX)
    task = models.IntegerField(null=True, blank=True)  # None: the connector itself
    state = models.CharField(max_length=16)  # a Connect state, or CREATED / DELETED
    previous = models.CharField(max_length=16, blank=True)
    worker_id = models.CharField(max_length=300, blank=True)
    trace = models.TextField(blank=True)
    actor = models.CharField(max_length=150, blank=True)  # who made the change, when the console made it
    at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["cluster", "connect", "connector", "-at"])]
