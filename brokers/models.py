"""Where each cluster's broker metrics come from, the time series sampled from them, and how sampling last went."""

from __future__ import annotations

from django.db import models


class MetricsSource(models.Model):
    """A cluster's metrics source: each broker's JMX agent, or a Prometheus server that scrapes each broker's JMX
    exporter agent. Only the name of the environment variable holding the password is kept."""

    JMX, PROMETHEUS = "jmx", "prometheus"

    cluster = models.CharField(max_length=63, unique=True)
    kind = models.CharField(max_length=16, default=JMX)
    # Each broker's JMX agent, or with Prometheus each broker's exporter as Prometheus scrapes it: "+10000" (each
    # broker's host, its Kafka port plus 10000), ":9999" (each broker's host, that port) or "1=host:port,2=host:port"
    # (gateway/kafka/types/metrics.py checks every host before it reaches the JVM or a query)
    jmx = models.CharField(max_length=1000, default="+10000")
    prometheus_url = models.CharField(max_length=300, blank=True)
    username = models.CharField(max_length=100, blank=True)
    password_env = models.CharField(max_length=200, blank=True)
    tls = models.BooleanField(default=False)
    # With tls: a PEM file of the CA the agents' certificates are checked against (besides Java's own), inside
    # CONSOLE_CLUSTER_CERT_DIRS as a cluster's files are.
    ca_file = models.CharField(max_length=500, blank=True)
    enabled = models.BooleanField(default=True)
    updated_by = models.CharField(max_length=150, blank=True)
    updated_at = models.DateTimeField(null=True)

    def __str__(self) -> str:
        return f"{self.cluster}: {self.kind} {self.prometheus_url} {self.jmx}".replace("  ", " ")


class BrokerSample(models.Model):
    """One broker's figures (topic blank) or one topic's figures on one broker, at one sample (step 0) or averaged
    over a minute (step 60). Rates are per second, over the time since the sample before."""

    RAW, MINUTE = 0, 60

    cluster = models.CharField(max_length=63)
    broker = models.IntegerField()
    topic = models.CharField(max_length=249, blank=True)
    at = models.DateTimeField()
    step = models.SmallIntegerField(default=RAW)
    values = models.JSONField(default=dict)

    class Meta:
        indexes = [models.Index(fields=["cluster", "step", "topic", "at"]),
                   models.Index(fields=["cluster", "step", "at"])]


class BrokerState(models.Model):
    """A broker's newest reading: its figures for the tiles, or why its JMX gave none; and the meters' counts the
    next sample's rates are computed from."""

    cluster = models.CharField(max_length=63)
    broker = models.IntegerField()
    address = models.CharField(max_length=300, blank=True)
    last_ok_at = models.DateTimeField(null=True)
    last_error = models.TextField(blank=True)
    error_kind = models.CharField(max_length=16, blank=True)
    last_error_at = models.DateTimeField(null=True)
    read_ms = models.IntegerField(default=0)
    latest = models.JSONField(default=dict)
    counts = models.JSONField(default=dict)  # {"broker": {key: count}, "topics": {topic: {key: count}}, "at": t}
    # The newest reading's partitions on this broker above 0 % of their retention.bytes (KIP-1257's gauge, JMX
    # sources only): {topic: {"partition": percent}}. Only the newest: the topic page and the alert rules read it.
    retention_shares = models.JSONField(default=dict)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "broker"], name="one_state_per_broker")]
        ordering = ["cluster", "broker"]


class SamplerRun(models.Model):
    """How the broker sampler last went on a cluster, and how far raw samples are averaged into minutes."""

    cluster = models.CharField(max_length=63, unique=True)
    last_run_at = models.DateTimeField(null=True)
    last_ok_at = models.DateTimeField(null=True)
    last_error = models.TextField(blank=True)
    duration_ms = models.IntegerField(default=0)
    # The sweep took longer than the interval, or started more than an interval late: samples were missed.
    behind = models.TextField(blank=True)
    rolled_until = models.FloatField(default=0.0)  # epoch seconds: minutes before it are averaged
