"""A protected `local` cluster, a group with commits on a topic with records, people of each role, and a real
webhook receiver as the protection's channel."""

from __future__ import annotations

import uuid

import pytest

from tests.fixtures.webhooks import Receiver


@pytest.fixture
def webhook(settings):
    """A receiver registered as webhook channel `changes`."""
    receiver = Receiver()
    settings.ALERT_WEBHOOKS = f"changes={receiver.url}"
    yield receiver
    receiver.close()


@pytest.fixture
def second_operator(make_user):
    return make_user("olga", "operator")


@pytest.fixture
def actor_of():
    from console.audit.actor import Actor

    return lambda user: Actor(user=user, source="web", remote_addr="127.0.0.1")


@pytest.fixture
def protect(local_cluster, admin, actor_of):
    """protect(**fields) protects `local` as the admin would."""
    from changes.services import protection_set

    def run(*, whole_cluster=True, topic_patterns=(), group_patterns=(), approvals=None, webhook=""):
        return protection_set(actor=actor_of(admin), cluster="local", whole_cluster=whole_cluster,
                              topic_patterns=list(topic_patterns), group_patterns=list(group_patterns),
                              approvals=approvals, webhook=webhook, reason="production: two people per change")

    return run


@pytest.fixture
def group_with_commits(topic_factory, produce, commit):
    """A 2-partition topic with 10 records on each partition; a group (now Empty) committed 4 and 6. The group's id
    holds what a name may: '/', a space, '#', '%', quotes, markup and Unicode."""
    topic = topic_factory("fe", partitions=2)
    produce(topic, [(p, None, b"v", None) for p in (0, 1) for _ in range(10)])
    group = f"fe/ #%'\"<b>ü-{uuid.uuid4().hex[:8]}"
    commit(group, {(topic, 0): 4, (topic, 1): 6})
    return {"topic": topic, "group": group}
