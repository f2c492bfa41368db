"""A broker's log directories through the API, on the broker with two of them: the list is what `manage.py brokers
log-dirs --format json` prints, a dry run changes nothing, and a cordon and its uncordon are audited as the token's."""

from __future__ import annotations

import pytest

from console.accounts.roles import Role
from console.audit.models import AuditEvent
from console.clusters.models import Cluster
from tests.api.conftest import shell_json

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def _steady(listed: dict) -> dict:
    """Without the volume's free bytes, which move between two reads."""
    return {**listed, "log_dirs": [{k: v for k, v in d.items() if k != "usable_bytes"} for d in listed["log_dirs"]]}


def test_log_dirs_listed_previewed_cordoned_and_uncordoned(api_as, admin, viewer, jbod_kafka):
    Cluster.objects.update_or_create(name="jbod", defaults={"bootstrap_servers": jbod_kafka.bootstrap})
    second = str(jbod_kafka.log_dirs[1])
    path = "/clusters/jbod/brokers/1/log-dirs"
    listed = api_as(viewer).get(path)
    assert listed.status_code == 200
    assert _steady(listed.json()) == _steady(shell_json("brokers", "log-dirs", "--cluster", "jbod", "--broker", "1"))
    assert api_as(viewer).post(path + "/cordon", {"log_dirs": [second], "reason": "x"}).status_code == 403

    api = api_as(admin, role=Role.ADMIN, name="ci")
    dry = api.post(path + "/cordon", {"log_dirs": [second], "dry_run": True})
    assert dry.status_code == 200, dry.content
    assert dry.json()["after"] == second and dry.json()["preview"] is True
    assert [d["path"] for d in dry.json()["directories"]] == [second]
    assert not any(d["cordoned"] for d in api.get(path).json()["log_dirs"])
    assert api.post(path + "/cordon", {"log_dirs": [second]}).status_code == 400  # no reason
    refused = api.post(path + "/cordon", {"log_dirs": ["/nowhere"], "reason": "x"})
    assert refused.status_code == 400 and "must be present in log.dirs" in refused.json()["detail"]

    done = api.post(path + "/cordon", {"log_dirs": [second], "reason": "disk swap"})
    assert done.status_code == 200, done.content
    assert done.json()["now"] == {"cordoned.log.dirs": second, "cordoned": [second]}
    assert [d["cordoned"] for d in api.get(path).json()["log_dirs"]] == [False, True]
    back = api.post(path + "/uncordon", {"log_dirs": ["*"], "reason": "disk back"})
    assert back.status_code == 200 and back.json()["now"] == {"cordoned.log.dirs": "", "cordoned": []}
    events = AuditEvent.objects.filter(cluster="jbod", outcome="success", action__startswith="broker.log_dir.")
    assert [(e.action, e.source, e.reason) for e in events.order_by("seq")][-2:] == [
        ("broker.log_dir.cordon", "api", "disk swap"), ("broker.log_dir.uncordon", "api", "disk back")]
