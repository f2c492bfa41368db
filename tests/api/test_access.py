"""Who may call what: no token or a revoked or expired one gets 401; a token limited to one cluster and read-only
gets 403 on another cluster and on any write, each refusal audited and nothing changed; roles under the token's
ceiling as the pages check them; the rate limit; problem details everywhere."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from console.accounts.roles import Role
from console.audit.models import AuditEvent
from console.clusters.models import Cluster
from console.tokens.auth import MSG_CLUSTER, MSG_NO_TOKEN, MSG_READ_ONLY
from console.tokens.models import ApiToken
from api.pagination import MSG_CURSOR
from tests.api.conftest import Api

pytestmark = pytest.mark.django_db
PROBLEM = "application/problem+json"


def test_no_token_or_a_session_gets_401(client, client_for, viewer):
    answer = client.get("/api/v1/clusters")
    assert answer.status_code == 401 and answer["Content-Type"] == PROBLEM
    assert answer.json()["detail"] == MSG_NO_TOKEN and answer["WWW-Authenticate"].startswith("Bearer")
    # A console session is not a token: a page could otherwise make a logged-in browser call the API
    assert client_for(viewer).get("/api/v1/clusters").status_code == 401


def test_revoked_and_expired_tokens_get_401(client, viewer, token_for):
    secret = token_for(viewer)
    token = ApiToken.objects.get()
    ApiToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now(), revoked_by="ada")
    answer = Api(client, secret).get("/clusters")
    assert answer.status_code == 401 and "revoked" in answer.json()["detail"]
    ApiToken.objects.filter(pk=token.pk).update(revoked_at=None, expires_at=timezone.now() - timedelta(minutes=1))
    answer = Api(client, secret).get("/clusters")
    assert answer.status_code == 401 and "expired" in answer.json()["detail"]


@pytest.mark.kafka
def test_a_token_for_one_cluster_read_only_gets_403_elsewhere_and_on_writes(client, admin, token_for, local_cluster,
                                                                              topic_factory):
    Cluster.objects.create(name="prod", bootstrap_servers="127.0.0.1:1")
    api = Api(client, token_for(admin, role=Role.ADMIN, clusters=["local"], read_only=True, name="dashboards"))
    topic = topic_factory("scoped")
    assert api.get(f"/clusters/local/topics/{topic}").status_code == 200
    assert [c["name"] for c in api.get("/clusters").json()] == ["local"]  # prod is not even listed
    elsewhere = api.get("/clusters/prod/topics")
    assert elsewhere.status_code == 403 and elsewhere.json()["detail"] == MSG_CLUSTER.format(clusters="'local'",
                                                                                            cluster="prod")
    writes = [api.post("/clusters/local/topics", {"name": f"{topic}-2", "partitions": 1, "reason": "x"}),
              api.patch(f"/clusters/local/topics/{topic}/configs", {"set": {"retention.ms": "1"}, "reason": "x"}),
              api.delete(f"/clusters/local/topics/{topic}", {"confirm": topic, "reason": "x"}),
              api.post(f"/clusters/local/topics/{topic}/records", {"value": "x", "reason": "x"})]
    assert [w.status_code for w in writes] == [403] * 4
    assert {w.json()["detail"] for w in writes} == {MSG_READ_ONLY}
    refusals = AuditEvent.objects.filter(action="token.refused", outcome="refused").order_by("seq")
    assert [(e.cluster, e.target.split(" ")[0]) for e in refusals] == [
        ("prod", "GET"), ("local", "POST"), ("local", "PATCH"), ("local", "DELETE"), ("local", "POST")]
    assert {e.source for e in refusals} == {"api"} and {e.params["token"]["name"] for e in refusals} == {"dashboards"}
    # nothing changed: the topic is still there, unchanged, with no record
    assert not AuditEvent.objects.filter(outcome="intent").exclude(action="token.create").exists()
    described = api.get(f"/clusters/local/topics/{topic}").json()
    assert all(c["source"] != "topic" for c in described["configs"] if c["name"] == "retention.ms")
    assert sum(p["messages"] for p in described["partitions"]) == 0


@pytest.mark.kafka
def test_the_roles_are_the_pages_under_the_tokens_ceiling(client, admin, operator, token_for, local_cluster):
    lowered = Api(client, token_for(admin, role=Role.VIEWER, name="viewer-ceiling"))
    answer = lowered.post("/clusters/local/topics", {"name": "never-made", "partitions": 1, "reason": "x"})
    assert answer.status_code == 403 and answer.json()["detail"] == "This needs the admin role; ada has viewer."
    assert lowered.get("/clusters/local/masking-rules").status_code == 403
    assert AuditEvent.objects.filter(action="token.refused", params__role="admin").count() == 2
    as_operator = Api(client, token_for(operator, role=Role.OPERATOR))
    assert as_operator.post("/clusters/local/topics", {"name": "never-made", "partitions": 1,
                                                       "reason": "x"}).status_code == 403


def test_the_rate_limit_answers_429_with_retry_after(client, viewer, token_for, settings, local_cluster):
    settings.API_RATE_LIMIT_PER_MINUTE = 2
    api = Api(client, token_for(viewer))
    assert [api.get("/alerts").status_code for _ in range(2)] == [200, 200]
    limited = api.get("/alerts")
    assert limited.status_code == 429 and limited["Content-Type"] == PROBLEM
    assert 1 <= int(limited["Retry-After"]) <= 60 and "calls this minute" in limited.json()["detail"]


@pytest.mark.kafka
def test_a_request_that_does_not_fit_is_a_problem_with_each_field(client, admin, token_for, local_cluster):
    api = Api(client, token_for(admin, role=Role.ADMIN))
    answer = api.post("/clusters/local/topics", {"name": "", "partitions": 0})
    assert answer.status_code == 400 and answer["Content-Type"] == PROBLEM
    body = answer.json()
    assert body["title"] == "Bad Request" and body["status"] == 400
    assert [e["field"] for e in body["errors"]] == ["name", "partitions", "reason"]
    unknown = api.get("/clusters/nowhere/topics")
    assert unknown.status_code == 404 and "nowhere" in unknown.json()["detail"]
    bad_cursor = api.get("/clusters/local/topics", {"cursor": "!!"})
    assert bad_cursor.status_code == 400 and bad_cursor.json()["detail"] == MSG_CURSOR
