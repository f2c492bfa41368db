"""A sweep across many clusters, some of them unreachable in different ways, takes as long as the slowest one."""

from __future__ import annotations

import time

import pytest

from devstack.kafka import free_port
from offsets.lag.sampler import lag_sample_all
from offsets.models import LagSweep
from tests.fixtures.secured_kafka import secured_settings

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def test_unreachable_clusters_are_sampled_side_by_side(local_cluster, silent_server, secured_kafka, settings):
    from console.clusters.models import Cluster

    Cluster.objects.create(name="refused", bootstrap_servers=f"127.0.0.1:{free_port()}")
    Cluster.objects.create(name="silent", bootstrap_servers=silent_server)
    wrong_password = secured_settings(secured_kafka)
    wrong_password["secret_env"] = {"sasl.password": "CONSOLE_SECRET_TEST_WRONG_KAFKA_PASSWORD"}
    Cluster.objects.create(name="bad-password", **wrong_password)
    Cluster.objects.create(name="secured", **secured_settings(secured_kafka))
    import os

    os.environ["CONSOLE_SECRET_TEST_WRONG_KAFKA_PASSWORD"] = "not-the-password"

    started = time.monotonic()
    outcome = lag_sample_all()
    elapsed = time.monotonic() - started

    assert "groups" in outcome["local"] and "groups" in outcome["secured"], outcome
    for name in ("refused", "silent", "bad-password"):
        assert outcome[name].startswith("failed: "), outcome
        assert LagSweep.objects.get(cluster=name).last_error
    assert "refused the console's credentials" in outcome["bad-password"]
    # Each unreachable cluster costs one request timeout; side by side, three of them cost about one.
    one_timeout = settings.KAFKA_REQUEST_TIMEOUT_S
    assert elapsed < 2 * one_timeout + 2, (elapsed, outcome)
