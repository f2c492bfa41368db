"""The MCP server through the SDK's own client: over streamable HTTP at /mcp of a real gunicorn web process (the
console's WSGI server) and over stdio (`manage.py mcp`). It lists the tools, describes a lagging group (its lag,
its status with the reason, its rebalance history), explains the lag, previews a reset, and is refused the
execution without the token's permission (audited, nothing changed); with it, the reset runs. Every call is
audited."""

from __future__ import annotations

import concurrent.futures
import json
import sys
import uuid
from datetime import UTC, datetime, timedelta

import anyio
import httpx2
import pytest
import requests
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from console.accounts.roles import Role
from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from console.paths import PROJECT_DIR
from console.tokens.auth import MSG_NO_EXECUTE
from offsets.lag.sampler import lag_sample
from tests.fixtures.celery import celery_env

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]

TOOLS = {"list_clusters", "list_topics", "describe_topic", "list_groups", "describe_group", "group_lag_over_time",
         "explain_group_lag", "read_records", "search_records", "preview_reset", "execute_reset", "preview_replay",
         "execute_replay"}


@pytest.fixture
def lagging(local_cluster, topic_factory, produce, commit):
    """A group that committed offset 2 and stopped while the topic grows: three lag sweeps call it STOP."""
    topic = topic_factory("mcp-lag", partitions=1)
    group = f"billing-{uuid.uuid4().hex[:6]}"
    produce(topic, [(0, None, b"x", None)] * 10)
    commit(group, {(topic, 0): 2})
    now = datetime.now(UTC)
    for i, back in enumerate((60, 30, 0)):
        if i:
            produce(topic, [(0, None, b"x", None)] * 5)
        lag_sample(cluster="local", now=now - timedelta(seconds=back))
    return {"topic": topic, "group": group}


def text_of(result) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def over_http(url: str, secret: str, work):
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=60) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                return await work(session)


def assistant_questions(group: str, topic: str):
    async def work(session: ClientSession) -> dict:
        listed = await session.list_tools()
        described = await session.call_tool("describe_group", {"cluster": "local", "group": group})
        explained = await session.call_tool("explain_group_lag", {"cluster": "local", "group": group})
        preview = await session.call_tool("preview_reset", {"cluster": "local", "group": group,
                                                            "strategy": "to-offset", "value": "12",
                                                            "topics": [topic]})
        body = json.loads(text_of(preview))
        executed = await session.call_tool("execute_reset", {
            "cluster": "local", "group": group, "strategy": "to-offset", "value": "12", "topics": [topic],
            "fingerprint": body["fingerprint"], "reason": "catch up"})
        return {"tools": {t.name for t in listed.tools}, "described": json.loads(text_of(described)),
                "explained": json.loads(text_of(explained)), "preview": body, "executed": executed}
    return work


def test_the_sdk_client_over_streamable_http(web_server, lagging, operator, token_for):
    web = web_server("gunicorn")
    group, topic = lagging["group"], lagging["topic"]
    secret = token_for(operator, role=Role.OPERATOR, name="assistant")
    answers = run_apart(over_http, f"{web.url}/mcp", secret, assistant_questions(group, topic))

    assert answers["tools"] == TOOLS
    described = answers["described"]
    assert [(r["partition"], r["current_offset"], r["lag"]) for r in described["partitions"]] == [(0, 2, 18)]
    assert described["state"]["state"] == "Empty" and described["status"]["status"] == "STOP"
    assert described["status"]["reason"] == f"{topic}-0: no members, committed offset 2 with lag 18"
    assert described["rebalances"] == []
    explained = answers["explained"]
    assert explained["status"] == "STOP" and explained["members"] == 0 and explained["lag"] == 18
    assert any(f.startswith("Stopped:") for f in explained["findings"])
    assert any("no members" in f for f in explained["findings"])
    preview = answers["preview"]
    assert [(p["current"], p["target"], p["records_to_skip"]) for p in preview["partitions"]] == [(2, 12, 10)]
    assert preview["allowed"] and preview["fingerprint"]

    executed = answers["executed"]
    assert executed.is_error and text_of(executed).endswith(MSG_NO_EXECUTE)
    offsets = cluster_admin("local").group_offsets([group])[group]
    assert [o for ref, o in offsets.items() if ref.topic == topic] == [2]  # nothing changed
    refusal = AuditEvent.objects.get(action="token.refused", target="mcp:execute_reset")
    assert refusal.source == "mcp" and refusal.params["token"]["name"] == "assistant"
    calls = AuditEvent.objects.filter(action="mcp.call", outcome="success")
    assert sorted(e.target for e in calls) == ["mcp:describe_group", "mcp:explain_group_lag", "mcp:preview_reset"]
    assert {e.actor_id for e in calls} == {operator.pk}

    allowed = token_for(operator, role=Role.OPERATOR, mcp_execute=True, name="assistant-exec")
    answers = run_apart(over_http, f"{web.url}/mcp", allowed, assistant_questions(group, topic))
    assert not answers["executed"].is_error
    assert json.loads(text_of(answers["executed"])) == [{"topic": topic, "partition": 0, "offset": 12}]
    reset = AuditEvent.objects.get(action="group.offsets.reset", outcome="success")
    assert reset.source == "mcp" and reset.params["token"]["name"] == "assistant-exec"

    # Without a valid token the endpoint answers 401 before any MCP is spoken
    refused = requests.post(f"{web.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                            headers={"Authorization": "Bearer kc_wrong"}, timeout=10)
    assert refused.status_code == 401 and refused.headers["WWW-Authenticate"].startswith("Bearer")


def test_the_sdk_client_over_stdio(redis_node, kafka_node, lagging, viewer, token_for):
    secret = token_for(viewer, name="desktop assistant", clusters=["local"])
    env = {**celery_env(redis_node, kafka_node), "CONSOLE_API_TOKEN": secret}
    params = StdioServerParameters(command=sys.executable, args=["manage.py", "mcp"], env=env, cwd=str(PROJECT_DIR))

    async def talk():
        async with stdio_client(params) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                tools = await session.list_tools()
                described = await session.call_tool("describe_group", {"cluster": "local", "group": lagging["group"]})
                elsewhere = await session.call_tool("list_topics", {"cluster": "prod"})
                return {t.name for t in tools.tools}, json.loads(text_of(described)), elsewhere

    names, described, elsewhere = run_apart(talk)
    assert names == TOOLS and described["status"]["status"] == "STOP"
    assert elsewhere.is_error and "reaches only 'local'" in text_of(elsewhere)
    assert AuditEvent.objects.filter(action="mcp.call", source="mcp", target="mcp:describe_group").count() == 1


def run_apart(function, *args):
    """anyio.run on a thread of its own: a browser test before this one in the same session leaves an event loop
    running in the main thread (Playwright's sync API), where anyio.run refuses to start another."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, function, *args).result(timeout=300)
