"""Four-eyes changes of a connector's offsets (KIP-875) on the real broker and Connect worker: on a protected
cluster the page, the shell and the API ask for a request and change nothing; the service itself refuses to run
outside one; the requester cannot approve; another operator's approval writes exactly the previewed offsets; a
request whose connector's offsets moved meanwhile is refused as stale."""

from __future__ import annotations

import json
import re
import uuid
from io import StringIO
from urllib.parse import quote

import pytest
from django.core.management import call_command
from django.urls import reverse

from changes.guard import ChangeRequestRequired, is_protected
from changes.models import ChangeRequest
from changes.services import change_request_approve
from connect.connector_offsets.preview import written_offsets_preview
from connect.connector_offsets.services import ALTER, RESET, connector_offsets_alter
from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.errors import Conflict, PermissionRefused
from gateway.kafka_connect.types import OffsetEntry
from tests.connect.conftest import FILE_SOURCE, read_values

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
BASE_NAME = "four eyes ☃ #"


def _offsets(connect_rest, name: str) -> list[dict]:
    status, body = connect_rest("GET", "connectors", name, "offsets")
    assert status == 200
    return body["offsets"]


@pytest.fixture
def stopped_source(connect_cluster, connect_rest, topic_factory, tmp_path, kafka_node):
    """A FileStreamSource connector that read a 5-line file to its end, now STOPPED. Its name is new to the worker:
    Connect keeps a deleted connector's offsets, and a connector made again under the name would find them."""
    name = f"{BASE_NAME}{uuid.uuid4().hex[:8]}"
    topic = topic_factory("fe-src")
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line-{i}\n" for i in range(5)))
    assert connect_rest("POST", "connectors", body={"name": name, "config": {
        "connector.class": FILE_SOURCE, "file": str(source), "topic": topic}})[0] == 201
    read_values(kafka_node.bootstrap, topic, at_least=5)
    end = len(source.read_bytes())
    partition = {"filename": str(source)}
    at_end = [{"partition": partition, "offset": {"position": end}}]
    connect_rest.wait(lambda: _offsets(connect_rest, name) == at_end, what="the source offset at the file's end")
    assert connect_rest("PUT", "connectors", name, "stop")[0] in (202, 204)
    connect_rest.wait_state(name, "STOPPED")
    return {"partition": partition, "end": end, "name": name}


def _fingerprint(html: str) -> str:
    return re.search(r'name="fingerprint" value="([0-9a-f]+)"', html).group(1)


def test_an_offsets_edit_on_a_protected_cluster_is_asked_then_approved_by_another_operator(
        protect, stopped_source, connect_rest, operator, second_operator, client_for, actor_of):
    partition, end, name = stopped_source["partition"], stopped_source["end"], stopped_source["name"]
    protect(whole_cluster=False, topic_patterns=["nothing-of-this-*"])
    # No pattern list names connectors: any protection of the Connect cluster's Kafka cluster covers them.
    assert is_protected("local", f"connector:local/{name}")
    web = client_for(operator)
    change = {"mode": "json", "offsets_json": json.dumps([{"partition": partition, "offset": {"position": 8}}])}
    preview = web.post(reverse("connect:offsets-preview", args=["local", "local", name]), change).content.decode()
    assert 'id="protected-note"' in preview and "Ask for approval of this plan" in preview

    asked = web.post(reverse("connect:offsets-execute", args=["local", "local", name]),
                     {**change, "fingerprint": _fingerprint(preview), "reason": "re-emit lines 1 to 4",
                      "confirm": name})

    request = ChangeRequest.objects.get()
    assert asked.status_code == 302 and asked.headers["Location"] == reverse("changes:detail", args=[request.pk])
    assert (request.action, request.target, request.status) == (ALTER, f"connector:local/{name}", "pending")
    assert request.plan["offsets"] == [{"partition": partition, "before": {"position": end},
                                        "after": {"position": 8}}]
    assert _offsets(connect_rest, name) == [{"partition": partition, "offset": {"position": end}}]
    assert not AuditEvent.objects.filter(action=ALTER, outcome="success").exists()

    # The service itself, reached another way (a script, a bulk path), refuses and audits the refusal.
    direct = written_offsets_preview("local", "local", name, [OffsetEntry(partition, {"position": 8})])
    with pytest.raises(ChangeRequestRequired):
        connector_offsets_alter(actor=actor_of(operator), cluster="local", preview=direct, reason="sneak",
                                confirm=name)
    assert AuditEvent.objects.filter(action=ALTER, outcome="refused").exists()
    assert _offsets(connect_rest, name)[0]["offset"] == {"position": end}

    page = web.get(asked.headers["Location"]).content.decode()
    plan = page.split('id="change-plan"')[1].split("</table>")[0]
    assert f"&#x27;position&#x27;: {end}" in plan and "&#x27;position&#x27;: 8" in plan and name in page
    assert web.post(reverse("changes:approve", args=[request.pk]), {"reason": "mine"}).status_code == 403
    with pytest.raises(PermissionRefused):
        change_request_approve(actor=actor_of(operator), request_id=request.pk, reason="mine")

    done = client_for(second_operator).post(reverse("changes:approve", args=[request.pk]), {"reason": "checked"})

    assert done.status_code == 302
    request.refresh_from_db()
    assert request.status == "executed"
    assert _offsets(connect_rest, name) == [{"partition": partition, "offset": {"position": 8}}]
    event = AuditEvent.objects.get(action=ALTER, outcome="success")
    assert event.actor_name == second_operator.username and event.params["change_set"] == str(request.correlation_id)
    assert event.before == [{"partition": partition, "offset": {"position": end}}]


def test_a_reset_asked_from_the_shell_is_stale_once_the_offsets_moved(
        protect, stopped_source, connect_rest, operator, second_operator, actor_of):
    partition, end, name = stopped_source["partition"], stopped_source["end"], stopped_source["name"]
    protect()
    out = StringIO()
    call_command("connect", "offsets", name, "--reset", "--yes", "--actor", operator.username, "--reason",
                 "from scratch", stdout=out)
    request = ChangeRequest.objects.get()
    assert request.action == RESET and f"changes approve {request.pk}" in out.getvalue()
    assert _offsets(connect_rest, name) == [{"partition": partition, "offset": {"position": end}}]

    # Someone writes the connector's offsets straight into Connect while the request waits.
    assert connect_rest("PATCH", "connectors", name, "offsets",
                        body={"offsets": [{"partition": partition, "offset": {"position": 3}}]})[0] == 200

    with pytest.raises(Conflict, match="stale"):
        change_request_approve(actor=actor_of(second_operator), request_id=request.pk, reason="checked")

    request.refresh_from_db()
    assert request.status == "stale"
    assert _offsets(connect_rest, name) == [{"partition": partition, "offset": {"position": 3}}]
    assert not AuditEvent.objects.filter(action=RESET, outcome="success").exists()


def test_the_api_answers_202_with_the_request(protect, stopped_source, connect_rest, operator, client):
    from console.accounts.roles import Role
    from console.tokens.services import token_create
    from console.urlnames import escape_name
    from tests.api.conftest import Api

    partition, end, name = stopped_source["partition"], stopped_source["end"], stopped_source["name"]
    protect()
    _, secret = token_create(actor=Actor(user=operator, source="web"), name="ops", role=Role.OPERATOR,
                             expires_days=1)
    api = Api(client, secret)
    url = f"/clusters/local/connect/local/connectors/{quote(escape_name(name), safe='')}/offsets"
    preview = api.post(f"{url}/preview", {"reset": True})
    assert preview.status_code == 200, preview.content

    answer = api.post(url, {"reset": True, "fingerprint": preview.json()["fingerprint"], "reason": "from scratch"})

    assert answer.status_code == 202, answer.content
    request = ChangeRequest.objects.get()
    assert answer.json()["id"] == request.pk and request.action == RESET
    assert _offsets(connect_rest, name) == [{"partition": partition, "offset": {"position": end}}]
