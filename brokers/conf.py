"""The broker-metrics app's settings, read where they are used (console/settings.py has no room left): each one is
an environment variable of the same name, or a Django setting that overrides it (tests)."""

from __future__ import annotations

import os

from django.conf import settings


def _number(name: str, default: float) -> float:
    value = getattr(settings, name, None)
    if value is None:
        value = os.environ.get(name, "")
    try:
        return float(value) if value != "" else default
    except ValueError:
        return default


def sample_interval_s() -> float:
    """How often beat samples every cluster's brokers."""
    return max(5.0, _number("BROKER_METRICS_INTERVAL_S", 30.0))


def read_timeout_s() -> float:
    """What one broker's JMX may take to answer a sample before its tile says it is slow."""
    return max(0.5, _number("BROKER_METRICS_TIMEOUT_S", 5.0))


def raw_retention_s() -> float:
    return _number("BROKER_METRICS_RAW_RETENTION_HOURS", 24.0) * 3600


def minute_retention_s() -> float:
    return _number("BROKER_METRICS_MINUTE_RETENTION_DAYS", 30.0) * 86400


def local_jmx() -> str:
    """The `local` cluster's JMX addresses, seeded on every migrate: its brokers' Kafka ports plus 10000, which is
    where `make run` has them listen (devstack/kafka_jmx.py). Empty leaves the registration alone."""
    value = getattr(settings, "BROKER_METRICS_LOCAL_JMX", None)
    return os.environ.get("BROKER_METRICS_LOCAL_JMX", "+10000") if value is None else value


# What `make run`'s brokers ask of a JMX client (devstack/kafka_jmx.py, DEV_JMX_USER and DEV_JMX_PASSWORD_ENV):
# the seeded `local` source sends this user and the password in this variable when the variable is set.
LOCAL_JMX_USER = "monitor"
LOCAL_JMX_PASSWORD_ENV = "CONSOLE_SECRET_LOCAL_JMX_PASSWORD"


def local_jmx_credentials() -> tuple[str, str]:
    """(user, password variable) for the `local` cluster's seeded source; ("", "") where no password is set."""
    return (LOCAL_JMX_USER, LOCAL_JMX_PASSWORD_ENV) if os.environ.get(LOCAL_JMX_PASSWORD_ENV) else ("", "")
