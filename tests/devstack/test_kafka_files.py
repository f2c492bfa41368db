"""The development brokers take the largest open-file limit the machine allows, and say when it is too small for
the partitions already on disk (a broker with 40,000 partition folders failed to start with 'Too many open
files' and was restarted silently)."""

from __future__ import annotations

import resource

import pytest

from devstack.kafka import FILES_PER_PARTITION, FILES_SPARE, raise_open_file_limit


def test_the_soft_limit_is_raised_to_the_hard_one(tmp_path):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 1024, hard), hard))
    assert raise_open_file_limit(tmp_path / "missing") is None
    assert resource.getrlimit(resource.RLIMIT_NOFILE) == (hard, hard)


def test_too_many_partition_folders_for_the_limit_are_reported(tmp_path):
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > 60_000:
        pytest.skip(f"this machine allows {hard} open files: too many folders to make for the point")
    folders = (hard - FILES_SPARE) // FILES_PER_PARTITION + 1
    for i in range(folders):
        (tmp_path / f"orders-{i}").mkdir()
    (tmp_path / "__cluster_metadata-0").mkdir()
    (tmp_path / "not-a-partition").mkdir()
    warning = raise_open_file_limit(tmp_path)
    assert warning is not None and f"{folders + 1} partition folders" in warning and str(hard) in warning
    for i in range(5):
        (tmp_path / f"orders-{i}").rmdir()
    assert raise_open_file_limit(tmp_path) is None


def test_make_runs_brokers_take_every_second_port_from_the_first_pair():
    from devstack.kafka import dev_cluster_ports

    assert dev_cluster_ports(9092, 9093, 1) == [(9092, 9093)]
    assert dev_cluster_ports(9092, 9093, 3) == [(9092, 9093), (9094, 9095), (9096, 9097)]
