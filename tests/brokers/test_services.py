"""The `local` cluster's metrics source as migrate seeds it (brokers/services.py): `make run`'s brokers ask for a JMX
password, so the seeded source sends the user and names the variable `make` writes; an admin's own source is left
alone."""

from __future__ import annotations

import pytest

from brokers.conf import LOCAL_JMX_PASSWORD_ENV, LOCAL_JMX_USER
from brokers.models import MetricsSource
from brokers.services import metrics_source_seed_local
from devstack.kafka_jmx import DEV_JMX_PASSWORD_ENV, DEV_JMX_USER

pytestmark = pytest.mark.django_db


def test_the_seeded_source_asks_as_make_runs_brokers_want(monkeypatch):
    assert (LOCAL_JMX_USER, LOCAL_JMX_PASSWORD_ENV) == (DEV_JMX_USER, DEV_JMX_PASSWORD_ENV)
    monkeypatch.setenv(LOCAL_JMX_PASSWORD_ENV, "from-dot-env")
    MetricsSource.objects.filter(cluster="local").delete()

    metrics_source_seed_local()

    seeded = MetricsSource.objects.get(cluster="local")
    assert (seeded.jmx, seeded.username, seeded.password_env) == ("+10000", "monitor", LOCAL_JMX_PASSWORD_ENV)


def test_a_source_seeded_before_the_password_gets_it_and_an_admins_source_is_left_alone(monkeypatch):
    monkeypatch.setenv(LOCAL_JMX_PASSWORD_ENV, "from-dot-env")
    MetricsSource.objects.update_or_create(cluster="local", defaults={"jmx": "+10000", "username": "",
                                                                      "password_env": "", "updated_by": "migrate"})
    metrics_source_seed_local()
    assert MetricsSource.objects.get(cluster="local").username == "monitor"

    MetricsSource.objects.filter(cluster="local").update(jmx=":9999", username="", password_env="", updated_by="ops")
    metrics_source_seed_local()
    kept = MetricsSource.objects.get(cluster="local")
    assert (kept.jmx, kept.username, kept.password_env) == (":9999", "", "")
