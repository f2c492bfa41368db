"""The Connect pages: the list (filters, sorting, a worker that is down), a connector's page with masked secrets and
config provider references as written, the edit diff, bulk actions with one preview, registrations (admin), and
every change refused to viewers."""

from __future__ import annotations

import html
import re
import socket
import time

import pytest
from django.urls import reverse

from connect.masking import MASK
from connect.models import ConnectCluster
from console.audit.models import AuditEvent
from tests.connect.conftest import FILE_SINK, FILE_SOURCE

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
SINK_NAME, SOURCE_NAME = "page sink «1»", "page source #2"


@pytest.fixture
def two(connect_cluster, connect_rest, topic_factory, tmp_path):
    topic = topic_factory("pages")
    sink = {"connector.class": FILE_SINK, "topics": topic, "file": str(tmp_path / "s.txt"),
            "errors.deadletterqueue.topic.name": "", "connection.password": "hunter2",
            "api.token": "${file:/etc/none.properties:token}"}
    source = {"connector.class": FILE_SOURCE, "topic": topic, "file": str(tmp_path / "missing.txt")}
    for name, config in ((SINK_NAME, sink), (SOURCE_NAME, source)):
        assert connect_rest("POST", "connectors", body={"name": name, "config": config})[0] == 201
        connect_rest.wait_state(name, "RUNNING")
    return topic


def test_list_filters_sorts_and_names_the_topics(two, viewer, client_for, produce, connect_rest):
    produce(two, [(0, None, b"one", None)])  # KIP-558: a topic is the connector's once it has used it
    connect_rest.wait(lambda: connect_rest("GET", "connectors", SINK_NAME, "topics")[1][SINK_NAME]["topics"],
                      what="the sink's first record")
    web = client_for(viewer)
    url = reverse("connect:list", args=["local"])
    page = web.get(url).content.decode()
    assert "page sink «1»" in page and "page source #2" in page and two in page
    assert reverse("connect:connector", args=["local", "local", SINK_NAME]) in page
    only_sinks = web.get(url, {"type": "sink"}, headers={"HX-Request": "true"}).content.decode()
    assert SINK_NAME in only_sinks and SOURCE_NAME not in only_sinks and "<h1>" not in only_sinks
    assert SOURCE_NAME not in web.get(url, {"q": "sink"}).content.decode()
    by_type = web.get(url, {"sort": "type"}).content.decode()
    assert by_type.index(SINK_NAME) < by_type.index(SOURCE_NAME)
    assert "Bulk" not in page and 'name="action"' not in page  # viewers get no change buttons


def test_connector_page_masks_secrets_and_shows_references_as_written(two, viewer, client_for):
    page = client_for(viewer).get(reverse("connect:connector", args=["local", "local", SINK_NAME])).content.decode()
    assert "hunter2" not in page and MASK in page
    assert "${file:/etc/none.properties:token}" in page
    assert f"connect-{SINK_NAME}" in page  # its consumer group, linked to the group page
    assert reverse("offsets:detail", args=["local", f"connect-{SINK_NAME}"]) in page


def test_edit_is_a_diff_against_the_running_config_and_keeps_masked_secrets(two, operator, client_for,
                                                                             connect_rest):
    web = client_for(operator)
    url = reverse("connect:edit", args=["local", "local", SINK_NAME])
    text = web.get(url).content.decode()
    assert "hunter2" not in text and f"connection.password={MASK}" in text
    config = re.search(r"<textarea name=\"config\"[^>]*>(.*?)</textarea>", text, re.S).group(1)
    config = config.replace("&#x27;", "'").replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
    config = config.replace("&amp;", "&") + "tasks.max=2\n"
    diff = web.post(url, {"config": config, "step": "diff"}).content.decode()
    assert "tasks.max" in diff and "added" in diff and "connection.password" not in diff.split("config-diff")[1]
    fingerprint = re.search(r'name="fingerprint" value="([0-9a-f]+)"', diff).group(1)
    assert web.post(url, {"config": config, "step": "apply", "fingerprint": fingerprint,
                          "reason": "two tasks"}).status_code == 302
    stored = connect_rest.read("connectors", SINK_NAME, until=lambda info: info["config"]["tasks.max"] == "2")["config"]
    assert stored["tasks.max"] == "2" and stored["connection.password"] == "hunter2"
    event = AuditEvent.objects.get(action="connector.config.edit", outcome="success")
    assert event.before["connection.password"] == MASK and event.after["tasks.max"] == "2"
    stale = web.post(url, {"config": config, "step": "apply", "fingerprint": fingerprint, "reason": "again"})
    assert stale.status_code == 409


def test_bulk_pause_previews_what_the_filter_selects_then_pauses_each(two, operator, client_for, connect_rest):
    web = client_for(operator)
    bulk = reverse("connect:bulk", args=["local"])
    preview = web.post(bulk, {"action": "pause", "q": "page"})
    html = preview.content.decode()
    assert preview.status_code == 200 and SINK_NAME in html and SOURCE_NAME in html
    assert connect_rest.state(SINK_NAME) == "RUNNING"
    chosen = [value.replace("&quot;", '"') for value in re.findall(r'name="chosen" value="([^"]+)"', html)]
    done = web.post(bulk, {"action": "pause", "step": "execute", "chosen": chosen, "reason": "maintenance"})
    assert done.status_code == 302
    assert {connect_rest.state(SINK_NAME), connect_rest.state(SOURCE_NAME)} == {"PAUSED"}
    assert AuditEvent.objects.filter(action="connector.pause", outcome="success").count() == 2


def test_viewers_are_refused_every_change(two, viewer, client_for, connect_rest):
    web = client_for(viewer)
    args = ["local", "local", SINK_NAME]
    for url, data in ((reverse("connect:action", args=args), {"action": "stop"}),
                      (reverse("connect:delete", args=args), {"confirm": SINK_NAME, "reason": "x"}),
                      (reverse("connect:offsets-preview", args=args), {"mode": "reset"}),
                      (reverse("connect:bulk", args=["local"]), {"action": "pause"}),
                      (reverse("connect:create", args=["local", "local"]), {"plugin": FILE_SINK}),
                      (reverse("connect:register", args=["local"]), {"name": "x", "url": "http://h:1"})):
        assert web.post(url, data).status_code == 403, url
    assert connect_rest.state(SINK_NAME) == "RUNNING"


def test_registration_is_admin_only_and_refuses_secrets_and_foreign_variables(local_cluster, admin, operator,
                                                                               client_for, connect_worker):
    url = reverse("connect:register", args=["local"])
    assert client_for(operator).post(url, {"name": "other", "url": connect_worker.url}).status_code == 403
    web = client_for(admin)
    refused = web.post(url, {"name": "other", "url": "http://user:pw@127.0.0.1:1", "reason": "x"})
    assert refused.status_code == 400 and not ConnectCluster.objects.filter(name="other").exists()
    refused = web.post(url, {"name": "other", "url": connect_worker.url, "username": "u", "password_env": "SECRET_KEY"})
    assert refused.status_code == 400 and "console&#x27;s own secrets" in refused.content.decode()
    assert web.post(url, {"name": "other", "url": connect_worker.url, "reason": "second"}).status_code == 302
    assert ConnectCluster.objects.get(cluster="local", name="other").url == connect_worker.url
    assert AuditEvent.objects.filter(action="connect.cluster.register", outcome="success").count() == 1


@pytest.fixture
def frozen_port():
    """A loopback port that accepts connections and never answers, as a frozen worker does."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    yield listener.getsockname()[1]
    listener.close()


def test_a_down_connect_cluster_is_named_within_the_timeout_and_kafka_pages_do_not_wait(two, viewer, client_for,
                                                                                        settings, frozen_port):
    settings.CONNECT_REQUEST_TIMEOUT_S = 2.0
    ConnectCluster.objects.create(cluster="local", name="gone", url=f"http://127.0.0.1:{frozen_port}")
    web = client_for(viewer)
    started = time.monotonic()
    page = web.get(reverse("connect:list", args=["local"])).content.decode()
    assert time.monotonic() - started < 4.0
    assert "Kafka Connect &#x27;gone&#x27;" in page and "did not answer within 2 s" in page
    assert SINK_NAME in page  # the other Connect cluster is listed all the same
    started = time.monotonic()
    assert web.get(reverse("topics:list", args=["local"])).status_code == 200
    assert time.monotonic() - started < 2.0


def _inputs(page: str) -> list[str]:
    return re.findall(r'<(?:input|select|textarea)[^>]*\bname="(cfg:[^"]+)"', page)


def test_the_create_form_shows_each_of_connects_settings_once(connect_cluster, operator, client_for, connect_rest):
    page = client_for(operator).get(reverse("connect:create", args=["local", "local"]),
                                    {"plugin": FILE_SINK}).content.decode()

    names = _inputs(page)
    _, answer = connect_rest("PUT", "connector-plugins", FILE_SINK, "config", "validate",
                             body={"connector.class": FILE_SINK})
    defined = {c["definition"]["name"] for c in answer["configs"] if c["value"]["visible"]} - {"connector.class"}
    assert len(names) == len(set(names)) and {n[4:] for n in names} == defined
    assert names[:2] == ["cfg:name", "cfg:file"] and {"cfg:tasks.max", "cfg:topics"} <= set(names)
    essentials = page.split('data-group="Essentials"')[1].split("</details>")[0]
    assert 'name="cfg:name"' in essentials and " required " in essentials.split('name="cfg:name"')[1][:200]
    assert "Globally unique name" in page  # Connect's documentation of the setting
    assert re.search(r'<details class="settings-group" data-group="Error Handling">', page)  # closed


def test_a_refused_create_keeps_what_was_typed_and_shows_connect_at_each_field(two, connect_cluster, operator,
                                                                               client_for, connect_rest, tmp_path):
    web = client_for(operator)
    url = reverse("connect:create", args=["local", "local"])
    typed = {"plugin": FILE_SINK, "cfg:name": "typed once", "cfg:file": str(tmp_path / "out.txt"),
             "cfg:tasks.max": "zero", "cfg:errors.tolerance": "all", "reason": "try"}

    refused = web.post(url, typed, headers={"HX-Request": "true"})

    body = html.unescape(refused.content.decode())
    assert refused.status_code == 400 and "nothing was created" in body
    fields = dict(re.findall(r'<li data-field="([^"]+)" data-message="([^"]*)"', body))
    # at their settings, which the page puts under them
    assert set(fields) == {"cfg:tasks.max", "cfg:topics", "cfg:topics.regex"}
    assert body.count(fields["cfg:tasks.max"]) == 2  # the item's attribute and its text: shown once
    whole = web.post(url, typed)  # without JavaScript: the page again, as typed
    page = whole.content.decode()
    assert whole.status_code == 400 and 'name="cfg:name" value="typed once"' in page
    assert f'name="cfg:file" value="{tmp_path / "out.txt"}"' in page and 'name="cfg:tasks.max" value="zero"' in page
    shown = re.findall(r'class="field-error"[^>]*>([^<]*)<', page)  # Connect's 4 messages, each once, at its setting
    assert len(shown) == 4 and page.count("Invalid value zero for configuration tasks.max") == 1 and "typed once" not in connect_rest("GET", "connectors")[1]
    assert not AuditEvent.objects.filter(action="connector.create").exists()

    created = web.post(url, {**typed, "cfg:tasks.max": "1", "cfg:topics": two})
    assert created.status_code == 302
    stored = connect_rest("GET", "connectors", "typed once")[1]["config"]
    assert (stored["topics"], stored["tasks.max"], stored["errors.tolerance"]) == (two, "1", "all")


def test_a_bad_name_is_shown_at_the_name_field(connect_cluster, operator, client_for):
    from connect.services import MSG_NAME

    refused = client_for(operator).post(reverse("connect:create", args=["local", "local"]),
                                        {"plugin": FILE_SINK, "cfg:name": "a/b"}, headers={"HX-Request": "true"})
    assert refused.status_code == 400
    assert f'data-field="cfg:name" data-message="{html.escape(MSG_NAME)}"' in refused.content.decode()
