"""The frame's pure parts and its pages: menus grouped by what people come for, the cluster switcher keeping the
page, breadcrumbs and titles from the URL, a real 404 and 500, the favicon."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string

from console.accounts.roles import Role
from console.frame import breadcrumbs, nav_groups, switch_url


def test_the_menus_show_what_the_role_may_open_and_mark_the_section():
    viewer = nav_groups("topics:detail", "topics", "prod", Role.VIEWER)
    admin = nav_groups("topics:detail", "topics", "prod", Role.ADMIN)
    labels = {g.label: [i["label"] for i in g.items] for g in viewer}
    assert list(labels) == ["Cluster", "Topics", "Consumers", "Connect", "Security", "Operations"]
    assert "Masking rules" not in labels["Security"] and "Bulk topic actions" not in labels["Topics"]
    assert "Masking rules" in [i["label"] for g in admin for i in g.items]
    current = [g.label for g in viewer if g.current]
    assert current == ["Topics"]  # not "Clusters" on every cluster page, as a prefix match had it


def test_the_switcher_keeps_a_clusters_own_page_and_falls_back_to_the_list_for_an_object():
    assert switch_url("topics:list", {"cluster": "a"}, "topics", "b") == "/clusters/b/topics/"
    assert switch_url("topics:detail", {"cluster": "a", "topic": "orders"}, "topics", "b") == "/clusters/b/topics/"
    assert switch_url("offsets:reset", {"cluster": "a", "group": "g/1"}, "offsets", "b") == "/clusters/b/groups/"


def test_breadcrumbs_name_each_level_and_hostile_names_stay_text():
    crumbs = breadcrumbs("offsets:reset", "reset", "offsets", {"cluster": "prod", "group": "<b>team/eu west</b>"})
    assert [c["label"] for c in crumbs] == ["Clusters", "prod", "Consumer groups", "<b>team/eu west</b>",
                                           "Reset offsets"]
    assert crumbs[-1]["url"] is None and crumbs[3]["url"].startswith("/clusters/prod/groups/")


def test_the_500_page_stands_alone():
    page = render_to_string("500.html")  # Django renders it without a request context
    assert "Server error (500)" in page and "console.css" in page


@pytest.mark.django_db
def test_a_missing_page_and_the_favicon(client_for, viewer):
    client = client_for(viewer)
    missing = client.get("/clusters/local/nothing-here/")
    assert missing.status_code == 404 and "Not found" in missing.content.decode()
    icon = client.get("/favicon.ico")
    assert icon.status_code == 301 and icon["Location"].endswith("favicon.svg")
