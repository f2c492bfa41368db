"""The protocol migration page: who may see it, and group ids Kafka accepts that tidy fixtures never have, each a
real classic group with a member on the session broker, shown as text and linked to its own page."""

from __future__ import annotations

import time
import uuid
from urllib.parse import unquote

import pytest
from django.urls import resolve, reverse
from django.utils.html import escape
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.clusters.selectors import cluster_admin
from tests.fixtures.members import Member

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]

PAGE = "/clusters/local/protocol-migration/"


def test_viewers_and_up_see_the_page_others_do_not(local_cluster, make_user, client, viewer, operator, admin,
                                                    client_for):
    assert client.get(PAGE).status_code == 302  # to the login page
    client_for(make_user("nobody", None))
    assert client.get(PAGE).status_code == 403
    for user in (viewer, operator, admin):
        response = client_for(user).get(PAGE)
        assert response.status_code == 200
        body = response.content.decode()
        assert 'id="group-types"' in body and 'id="migration-policy"' in body
        assert f'href="{PAGE}"' in body  # in the Consumers menu


def test_the_menu_puts_it_beside_the_consumer_groups_for_a_viewer():
    from console.accounts.roles import Role
    from console.frame import nav_groups

    consumers = next(g for g in nav_groups("protocol-migration:page", "protocol-migration", "c1", Role.VIEWER)
                     if g.label == "Consumers")
    labels = [item["label"] for item in consumers.items]
    assert labels[:2] == ["Consumer groups", "Protocol migration"] and consumers.current
    assert consumers.items[1]["url"] == "/clusters/c1/protocol-migration/" and consumers.items[1]["active"]


def _stable(group: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        described = cluster_admin("local").describe_group_protocols([group])[group]  # Dead until it exists
        if described.state == "Stable" and described.members:
            return
        time.sleep(0.3)
    raise AssertionError(f"{group!r} never became Stable")


GROUP_IDS = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30).map(
    lambda s: f"{s} /#%\"'<b>ü")


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(GROUP_IDS)
def test_hostile_group_ids_are_text_on_the_page_and_link_to_their_group(local_cluster, kafka_node, topic_factory,
                                                                        viewer, client_for, name):
    group = f"{name}{uuid.uuid4().hex[:6]}"
    member = Member(kafka_node.bootstrap, group, topic_factory("hostile"), "hostile-client", "classic")
    try:
        _stable(group)
        body = client_for(viewer).get(PAGE).content.decode()
    finally:
        member.leave()
    assert f'data-group="{escape(group)}" data-verdict=' in body
    assert "<b>ü" not in body.replace("&lt;b&gt;ü", "")  # never markup
    link = reverse("offsets:detail", args=["local", group])
    assert f'href="{escape(link)}"' in body
    assert resolve(unquote(link)).kwargs["group"] == group  # as Django's handler decodes the path it received
