"""Security properties over every URL the resolver knows (no hand-made list): mutating routes refuse anonymous
users and viewers, GETs change nothing (database or Kafka), every page carries a Content-Security-Policy, and
repeated failed logins lock the account out."""

from __future__ import annotations

import re
import uuid

import pytest
from django.apps import apps
from django.urls import URLPattern, URLResolver, get_resolver

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]

CONSOLE_MODULES = ("console", "topics", "offsets", "sparkjobs", "connect", "changes")
PUBLIC = {"health", "health/ready", "health/live"}
# A person's own saved filters: any signed-in person, viewers too, saves and deletes their own (their owner-only
# rules are tested in tests/records/).
PERSONAL = {"clusters/<str:cluster>/messages/filters/<int:filter_id>/delete/",
            "clusters/<str:cluster>/messages/<kafka_name:topic>/filters/"}


def console_routes() -> list[tuple[str, object]]:
    def walk(patterns, prefix=""):
        for p in patterns:
            if isinstance(p, URLResolver):
                # One's own account and API tokens: every signed-in person, viewers too, may POST there (who may
                # revoke whose token is tested in tests/console/tokens/).
                if p.app_name == "admin" or str(p.pattern) in ("accounts/", "tokens/"):
                    continue
                yield from walk(p.url_patterns, prefix + str(p.pattern))
            elif isinstance(p, URLPattern):
                yield prefix + str(p.pattern), p.callback

    return [(route, view) for route, view in walk(get_resolver().url_patterns)
            if getattr(view, "__module__", "").startswith(CONSOLE_MODULES)]


def concrete(route: str, names: dict[str, str]) -> str:
    """The route with each <converter:name> filled in from `names` (1 for int converters)."""
    return "/" + re.sub(r"<(?:(\w+):)?(\w+)>",
                        lambda m: "1" if m.group(1) == "int" else names.get(m.group(2), "x"), route)


def test_every_route_declares_its_methods():
    """So that the two tests below know which routes mutate: nothing may accept every method silently."""
    from django.test import RequestFactory

    undeclared = []
    for route, view in console_routes():
        if route in PUBLIC:
            continue
        try:
            response = view(_anonymous(RequestFactory().put("/x")), **_kwargs(route))
        except Exception:  # anything but a 405 means the method was not checked first
            undeclared.append(route)
            continue
        if response.status_code != 405:
            undeclared.append(route)
    assert undeclared == []


def _anonymous(request):
    from django.contrib.auth.models import AnonymousUser

    request.user = AnonymousUser()
    request.htmx = False
    return request


def _kwargs(route: str) -> dict:
    return {name: (1 if conv == "int" else "x") for conv, name in re.findall(r"<(?:(\w+):)?(\w+)>", route)}


def test_mutating_routes_refuse_anonymous_users_and_viewers(client, client_for, viewer):
    routes = [(route, view) for route, view in console_routes() if route not in PUBLIC]
    mutating = [route for route, view in routes if _posts(route)]
    assert len(mutating) >= 15  # resets, reverts, deletes, configs, topics, replays, clusters...
    names = {"cluster": "local", "group": "g", "topic": "t", "seq": "1", "job_id": "1", "name": "x"}
    for route in mutating:
        url = concrete(route, names)
        anonymous = client.post(url, {})
        assert anonymous.status_code == 302 and "/accounts/login/" in anonymous.url, (route, anonymous.status_code)
    as_viewer = client_for(viewer)
    for route in (route for route in mutating if route not in PERSONAL):
        response = as_viewer.post(concrete(route, names), {})
        assert response.status_code == 403, (route, response.status_code)


def _posts(route: str) -> bool:
    """Whether a route's view takes POST, asked of the real view with a request that cannot pass its checks."""
    from django.test import RequestFactory

    from console.errors import ConsoleError

    view = dict(console_routes())[route]
    try:
        response = view(_anonymous(RequestFactory().post("/x")), **_kwargs(route))
    except ConsoleError:  # got past the method check to the role check: it takes POST
        return True
    return response.status_code != 405


def _state(topic: str, group: str) -> tuple:
    """Everything a GET could change: every table's rows, and the topic and group on the broker."""
    from console.clusters.selectors import cluster_admin

    rows = {}
    for model in apps.get_models():
        if model._meta.app_label in ("sessions", "axes"):
            continue  # logging in writes these
        rows[model._meta.label] = sorted(map(str, model.objects.values_list("pk", flat=True)))
    admin = cluster_admin("local")
    topics = sorted(t.name for t in admin.list_topics())
    offsets = admin.group_offsets([group])[group]
    partitions = admin.describe_topics([topic])[topic].partition_count
    return rows, topics, sorted(offsets.items()), partitions


def test_every_get_changes_nothing(client_for, admin, topic_factory, produce, commit):
    topic = topic_factory("get-only", partitions=2)
    produce(topic, [(p, None, b"x", None) for p in range(2)] * 3)
    group = f"get-only-{uuid.uuid4().hex[:6]}"
    commit(group, {(topic, 0): 1})
    client = client_for(admin)
    names = {"cluster": "local", "group": group, "topic": topic, "seq": "1", "job_id": "1", "name": "x"}
    before = _state(topic, group)
    visited = []
    for route, view in console_routes():
        url = concrete(route, names)
        response = client.get(url, {"range": "1h"})
        visited.append((route, response.status_code))
        if route in PUBLIC:
            # Health answers 503 while the session's Redis or Celery worker is down, and this test starts neither.
            body = response.json()
            assert response.status_code == (503 if body.get("status") == "degraded" else 200), (route, body)
        else:
            assert response.status_code < 500, (route, response.status_code)
    assert _state(topic, group) == before
    assert len(visited) >= 30


def test_every_page_has_a_content_security_policy(client_for, viewer):
    client = client_for(viewer)
    for url in ("/clusters/", "/clusters/local/topics/", "/clusters/local/groups/", "/audit/", "/accounts/login/"):
        policy = client.get(url).headers.get("Content-Security-Policy", "")
        assert "script-src 'self'" in policy and "object-src 'none'" in policy and "frame-ancestors 'none'" in policy


def test_repeated_failed_logins_lock_the_account_out(client, make_user, settings):
    make_user("target", "viewer")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        response = client.post("/accounts/login/", {"username": "target", "password": "guess"})
        assert response.status_code == 200 and "Wrong username or password" in response.content.decode()
    assert client.post("/accounts/login/", {"username": "target", "password": "guess"}).status_code == 429

    locked = client.post("/accounts/login/", {"username": "target", "password": "pw-target"})

    assert locked.status_code == 429 and "Too many failed logins" in locked.content.decode()
    assert "_auth_user_id" not in client.session
