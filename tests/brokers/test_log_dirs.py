"""Cordoning log directories (KIP-1066, Kafka 4.3): the plan (pure), then on a broker of its own with two log
directories: the broker page shows each directory's state, an admin previews and cordons one from the page (the
broker's own refusal of a bad entry shown at the form), DescribeLogDirs and the config then say it is cordoned, a new
topic's replicas all go to the other directory, and uncordoning from the shell reverts both; each change audited."""

from __future__ import annotations

import io
import json
import time
import uuid

import pytest
from django.core.management import call_command

from brokers.log_dirs import ALL, CONFIG, BrokerLogDirs, plan_cordon
from console.audit.models import AuditEvent
from console.clusters.models import Cluster
from console.errors import ConsoleError
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.types import BROKER, ClusterConnection, LogDirState


def _dirs(*cordoned: bool, replicas: int = 3) -> tuple[LogDirState, ...]:
    return tuple(LogDirState(broker=1, path=f"/d{i}", cordoned=c, replicas=replicas, size=100 * replicas)
                 for i, c in enumerate(cordoned))


def _state(config: str, *cordoned: bool, inherited: str = "") -> BrokerLogDirs:
    return BrokerLogDirs(broker=1, dirs=_dirs(*cordoned), config=config, source="dynamic-broker" if config else
                         "default", inherited=inherited)


def test_a_cordon_adds_entries_and_an_uncordon_takes_them_away():
    plan = plan_cordon(_state("", False, False), ["/d1"], cordon=True)
    assert (plan.before, plan.after, plan.remove_override) == ("", "/d1", False)
    assert [d.path for d in plan.affected] == ["/d1"] and plan.replicas == 3 and not plan.all_cordoned_after
    both = plan_cordon(_state("/d1", False, True), ["/d0"], cordon=True)
    assert both.after == "/d1,/d0" and both.all_cordoned_after
    back = plan_cordon(_state("/d1", False, True), ["/d1"], cordon=False)
    assert (back.after, back.remove_override, [d.path for d in back.affected]) == ("", True, ["/d1"])


def test_all_and_the_brokers_own_value():
    assert plan_cordon(_state("", False, False), [ALL], cordon=True).after == ALL
    # Out of "*", one directory uncordoned leaves the others listed.
    assert plan_cordon(_state(ALL, True, True), ["/d0"], cordon=False).after == "/d1"
    # Back to the broker's static setting: its override is removed; away from it, set (even to nothing).
    static = plan_cordon(_state("/d0,/d1", True, True, inherited="/d0"), ["/d1"], cordon=False)
    assert (static.after, static.remove_override) == ("/d0", True)
    emptied = plan_cordon(_state("/d0", True, False, inherited="/d0"), ["/d0"], cordon=False)
    assert (emptied.after, emptied.remove_override) == ("", False)
    # An entry the broker does not know goes to the broker as given, which refuses it in its own words.
    assert plan_cordon(_state("", False, False), ["/elsewhere"], cordon=True).after == "/elsewhere"
    assert plan_cordon(_state("", False, False), [ALL, "/d0"], cordon=True).after == "*,/d0"


def test_nothing_to_change_is_said_at_the_field():
    for state, wanted, cordon, words in ((_state("/d0", True, False), ["/d0"], True, "already cordoned"),
                                         (_state(ALL, True, True), ["/d1"], True, "already cordoned"),
                                         (_state("", False, False), ["/d0"], False, "not cordoned"),
                                         (_state("", False, False), [" "], True, "Name one or more")):
        with pytest.raises(ConsoleError, match=words) as refused:
            plan_cordon(state, wanted, cordon=cordon)
        assert refused.value.field == "log_dirs"


def _replicas_per_dir(admin: KafkaAdmin, topic: str) -> dict[str, int]:
    found = {}
    for replica in admin.describe_log_dirs([1]):
        if replica.ref.topic == topic:
            found[replica.log_dir] = found.get(replica.log_dir, 0) + 1
    return found


def _new_topic(admin: KafkaAdmin, partitions: int) -> str:
    topic = f"placed-{uuid.uuid4().hex[:8]}"
    admin.create_topic(topic, partitions=partitions, replication_factor=1, configs={})
    deadline = time.monotonic() + 30
    while sum(_replicas_per_dir(admin, topic).values()) < partitions:
        assert time.monotonic() < deadline, "the topic's replicas never showed in DescribeLogDirs"
        time.sleep(0.2)
    return topic


@pytest.mark.kafka
@pytest.mark.django_db
def test_cordon_from_the_page_and_uncordon_from_the_shell(jbod_kafka, admin, viewer, client_for):
    Cluster.objects.update_or_create(name="jbod", defaults={"bootstrap_servers": jbod_kafka.bootstrap})
    kafka = KafkaAdmin(ClusterConnection("jbod-test", jbod_kafka.bootstrap), timeout=10)
    first, second = (str(d) for d in jbod_kafka.log_dirs)
    section = "/clusters/jbod/health/brokers/1/log-dirs/"

    page = client_for(viewer).get("/clusters/jbod/health/brokers/1/").content.decode()
    assert section in page  # the section, loaded after the page (a broker without metrics still has its page)
    shown = client_for(viewer).get(section).content.decode()
    assert f'data-path="{first}" data-cordoned="false"' in shown
    assert f'data-path="{second}" data-cordoned="false"' in shown
    assert "Preview" not in shown  # a viewer sees the state only
    unknown = client_for(viewer).get("/clusters/jbod/health/brokers/7/log-dirs/").content.decode()
    assert "Cluster &#x27;jbod&#x27; has no broker 7 up (its brokers: 1)" in unknown  # said at once, in the section
    assert client_for(viewer).post(section + "preview/", {"action": "cordon", "log_dirs": second}).status_code == 403

    web = client_for(admin)
    refused = web.post(section + "preview/", {"action": "cordon", "log_dirs": "/not/a/log/dir"}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 400
    assert 'data-field="log_dirs"' in refused.content.decode()  # shown at the form's field, in the broker's words
    assert "must be present in log.dirs" in refused.content.decode()

    preview = web.post(section + "preview/", {"action": "cordon", "log_dirs": second}, HTTP_HX_REQUEST="true")
    assert preview.status_code == 200
    text = preview.content.decode()
    assert "(none)" in text and f"<code>{second}</code>" in text and "New replicas will not be placed" in text
    assert 'class="affected-dir"' in text and 'name="before" value=""' in text
    assert kafka.describe_configs(BROKER, ["1"])["1"][CONFIG].value == ""  # a preview changes nothing

    done = web.post(section + "apply/", {"action": "cordon", "log_dirs": second, "before": "", "reason": "disk swap"},
                    HTTP_HX_REQUEST="true")
    assert done.status_code == 200, done.content
    states = {d.path: d.cordoned for d in kafka.describe_log_dir_states([1])}
    assert states == {first: False, second: True}
    entry = kafka.describe_configs(BROKER, ["1"])["1"][CONFIG]
    assert (entry.value, entry.source) == (second, "dynamic-broker")
    event = AuditEvent.objects.get(action="broker.log_dir.cordon", outcome="success", cluster="jbod")
    assert (event.target, event.actor_name, event.reason, event.source) == ("broker:1", "ada", "disk swap", "web")
    assert event.before == {CONFIG: "", "cordoned": []} and event.after == {CONFIG: second, "cordoned": [second]}
    assert 'data-cordoned="true"' in client_for(viewer).get(section).content.decode()
    web = client_for(admin)  # the test client is one: it was the viewer's just now
    # The same preview again: nothing left to cordon. A stale preview's apply is refused.
    again = web.post(section + "preview/", {"action": "cordon", "log_dirs": second}, HTTP_HX_REQUEST="true")
    assert again.status_code == 400 and "already cordoned" in again.content.decode()
    stale = web.post(section + "apply/", {"action": "uncordon", "log_dirs": second, "before": ""},
                     HTTP_HX_REQUEST="true")
    assert stale.status_code == 409 and "preview again" in stale.content.decode()
    assert AuditEvent.objects.filter(action="broker.log_dir.uncordon", outcome="refused", cluster="jbod").exists()

    cordoned_topic = _new_topic(kafka, 6)
    assert _replicas_per_dir(kafka, cordoned_topic) == {first: 6}  # none in the cordoned directory

    out = io.StringIO()
    call_command("brokers", "uncordon", "--cluster", "jbod", "--broker", "1", "--log-dir", second, stdout=out)
    assert f"{second}: " in out.getvalue() and "--yes" in out.getvalue()  # without --yes, the preview
    assert {d.path: d.cordoned for d in kafka.describe_log_dir_states([1])}[second] is True
    call_command("brokers", "uncordon", "--cluster", "jbod", "--broker", "1", "--log-dir", second, "--yes",
                 "--actor", admin.username, "--reason", "disk back", stdout=io.StringIO())
    assert {d.path: d.cordoned for d in kafka.describe_log_dir_states([1])} == {first: False, second: False}
    entry = kafka.describe_configs(BROKER, ["1"])["1"][CONFIG]
    assert (entry.value, entry.source) == ("", "default")  # the override removed: the broker's own value again
    event = AuditEvent.objects.get(action="broker.log_dir.uncordon", outcome="success", cluster="jbod")
    assert (event.source, event.reason, event.after) == ("cli", "disk back", {CONFIG: "", "cordoned": []})

    listed = io.StringIO()
    call_command("brokers", "log-dirs", "--cluster", "jbod", "--broker", "1", "--format", "json", stdout=listed)
    assert [(d["path"], d["cordoned"]) for d in json.loads(listed.getvalue())["log_dirs"]] == [
        (first, False), (second, False)]
    # The second directory holds fewer replicas now: new ones go there again.
    assert _replicas_per_dir(kafka, _new_topic(kafka, 6)).get(second, 0) > 0
