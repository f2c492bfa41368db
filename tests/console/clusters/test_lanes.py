"""Which lane each kind of caller takes (ClusterConnection.lane): pages the default one, the lag sweep and the
shared tables' rebuilds the background one, with the bounds each had. Without a broker: only the gateways made."""

from __future__ import annotations

import pytest

from console.clusters.selectors import background_lane, cluster_admin, patient_admin
from gateway.kafka.types import BACKGROUND
from offsets.lag import observe
from offsets.selectors import _patient as group_table_admin
from topics.background import background_admin

pytestmark = pytest.mark.django_db


def test_pages_take_the_default_lane_and_background_work_its_own(settings):
    page = cluster_admin("local")
    assert page.connection.lane == ""
    background = background_lane(page)
    assert (background.connection.lane, background.timeout, type(background)) == (BACKGROUND, page.timeout,
                                                                                  type(page))
    assert background.connection.bootstrap_servers == page.connection.bootstrap_servers
    patient = patient_admin(page, 30.0)
    assert (patient.connection.lane, patient.timeout) == (BACKGROUND, 30.0)
    assert background_admin("local").connection.lane == BACKGROUND  # topic and disk tables
    assert group_table_admin(page).connection.lane == BACKGROUND  # the groups list's table
    assert page.connection.lane == ""  # the page's own gateway is left as it was


def test_the_lag_sweep_asks_through_the_background_lane(monkeypatch):
    used = []
    monkeypatch.setattr(observe.Sweeps, "_ask", staticmethod(lambda admin, *rest: used.append(admin)))
    observe.Sweeps(["local"], {}, 1.0).close()
    assert [admin.connection.lane for admin in used] == [BACKGROUND]
