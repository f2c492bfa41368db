"""The ACL and users pages on the real broker: anyone reads them, only admins change them, the preview lists the
exact bindings, hostile principals and names render as text, and a password never comes back in a page."""

from __future__ import annotations

import html
import uuid

import pytest

from access.bindings import binding_token, bindings_for
from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from gateway.kafka.types import AclQuery

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
HX = {"HX-Request": "true"}


def _form(principal: str, name: str, **changes) -> dict:
    return {"principal": principal, "resource_type": "TOPIC", "resource_name": name, "pattern_type": "LITERAL",
            "operations": ["READ", "DESCRIBE"], "permission": "ALLOW", "host": "*", "reason": "", **changes}


def test_acls_are_created_from_a_preview_and_listed_for_viewers(local_cluster, client_for, viewer, operator, admin):
    principal = f"User:<script>alert('{uuid.uuid4().hex[:4]}')</script> é"
    name = 'odd "topic" #1 / 100%'
    form = _form(principal, name)

    assert client_for(viewer).post("/clusters/local/access/acls/create/preview/", form).status_code == 403
    assert client_for(operator).post("/clusters/local/access/acls/create/", {**form, "reason": "r"}).status_code == 403
    preview = client_for(admin).post("/clusters/local/access/acls/create/preview/", form, headers=HX)
    text = preview.content.decode()
    assert preview.status_code == 200 and "2 bindings to create" in text
    assert "<script>alert" not in text and html.escape(principal) in text

    no_reason = client_for(admin).post("/clusters/local/access/acls/create/", form, headers=HX)
    assert no_reason.status_code == 400 and "A reason is required" in no_reason.content.decode()
    created = client_for(admin).post("/clusters/local/access/acls/create/", {**form, "reason": "grant"}, headers=HX)
    assert created.status_code == 200 and created.headers["HX-Redirect"] == "/clusters/local/access/acls/"
    assert AuditEvent.objects.filter(action="acl.create", outcome="success").count() == 1

    page = client_for(viewer).get("/clusters/local/access/acls/", {"principal": principal}).content.decode()
    assert page.count(html.escape(name)) == 2 and "<script>alert" not in page
    assert 'name="binding"' not in page  # no selection boxes for a viewer
    filtered = client_for(viewer).get("/clusters/local/access/acls/", {"resource_type": "TOPIC",
                                                                      "resource_name": name}).content.decode()
    assert filtered.count(html.escape(principal)) == 2


def test_selected_bindings_are_deleted_after_a_counted_confirmation(local_cluster, client_for, viewer, admin):
    principal = f"User:leaving-{uuid.uuid4().hex[:6]}"
    entries = bindings_for(principal=principal, resource_type="GROUP", resource_name="*", pattern_type="LITERAL",
                           operations=["READ", "DESCRIBE"], permission="ALLOW")
    cluster_admin("local").create_acls(entries)
    page = client_for(admin).get("/clusters/local/access/acls/", {"principal": principal}).content.decode()
    assert html.escape(binding_token(entries[0])) in page

    chosen = {"binding": [binding_token(entries[0])]}
    assert client_for(viewer).post("/clusters/local/access/acls/delete/preview/", chosen).status_code == 403
    preview = client_for(admin).post("/clusters/local/access/acls/delete/preview/", chosen, headers=HX)
    assert "1 binding to delete" in preview.content.decode()
    wrong = client_for(admin).post("/clusters/local/access/acls/delete/", {**chosen, "confirm": "2", "reason": "r"},
                                   headers=HX)
    assert wrong.status_code == 400 and "Type the number of bindings (1)" in wrong.content.decode()
    forged = client_for(admin).post("/clusters/local/access/acls/delete/", {"binding": ['["x"]'], "confirm": "1",
                                                                            "reason": "r"}, headers=HX)
    assert forged.status_code == 400 and "Not an ACL binding" in forged.content.decode()
    done = client_for(admin).post("/clusters/local/access/acls/delete/", {**chosen, "confirm": "1", "reason": "r"},
                                  headers=HX)
    assert done.status_code == 200
    left = cluster_admin("local").describe_acls(AclQuery(principal=principal))
    assert left == [entries[1]]


def test_credentials_from_the_users_page(local_cluster, client_for, viewer, admin):
    user, password = f"web-{uuid.uuid4().hex[:6]}", "pw-" + uuid.uuid4().hex
    form = {"user": user, "mechanism": "SCRAM-SHA-256", "iterations": 4096, "password": password, "reason": "new"}
    assert client_for(viewer).post("/clusters/local/access/users/credential/", form).status_code == 403
    few = client_for(admin).post("/clusters/local/access/users/credential/", {**form, "iterations": 100}, headers=HX)
    assert few.status_code == 400 and password not in few.content.decode()
    assert client_for(admin).post("/clusters/local/access/users/credential/", form, headers=HX).status_code == 200

    page = client_for(viewer).get("/clusters/local/access/users/").content.decode()
    assert user in page and "SCRAM-SHA-256" in page and password not in page
    assert "Client quotas" in page

    delete = {"user": user, "mechanism": "SCRAM-SHA-256", "confirm": user, "reason": "done"}
    assert client_for(viewer).post("/clusters/local/access/users/credential/delete/", delete).status_code == 403
    assert client_for(admin).post("/clusters/local/access/users/credential/delete/", delete,
                                  headers=HX).status_code == 200
    assert f"<td>{user}</td>" not in client_for(viewer).get("/clusters/local/access/users/").content.decode()
