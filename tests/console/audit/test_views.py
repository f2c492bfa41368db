import csv
import io
import json
import re

import pytest

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.audit.services import audit_record, audited

pytestmark = pytest.mark.django_db


@pytest.fixture
def events(admin):
    actor = Actor(user=admin, source="web", remote_addr="127.0.0.1")
    audit_record(actor=actor, action="topic.create", outcome="success", cluster="local", target="topic:orders",
                 reason="new service")
    audit_record(actor=actor, action="group.offsets.reset", outcome="success", cluster="local", target="group:billing",
                 before={"orders": {"0": 5}}, after={"orders": {"0": 0}})
    audit_record(actor=Actor.system(), action="topic.delete", outcome="failure", cluster="other", target="topic:old",
                 error="TopicNotFound")


def test_audit_page_lists_events_newest_first(client_for, viewer, events):
    response = client_for(viewer).get("/audit/")

    assert response.status_code == 200
    body = response.content.decode()
    assert body.index("topic.delete") < body.index("group.offsets.reset") < body.index("topic.create")


@pytest.mark.parametrize(
    ("query", "shown", "hidden"),
    [
        ("target=group:billing", "group.offsets.reset", "topic.create"),
        ("actor=system", "topic.delete", "topic.create"),
        ("cluster=other", "topic.delete", "group.offsets.reset"),
        ("action=topic.create", "topic.create", "topic.delete"),
        ("outcome=failure", "topic.delete", "topic.create"),
    ],
)
def test_audit_filters(client_for, viewer, events, query, shown, hidden):
    body = client_for(viewer).get(f"/audit/?{query}").content.decode()

    assert shown in body and hidden not in body


def test_time_range_filter_excludes_events_outside_it(client_for, viewer, events):
    body = client_for(viewer).get("/audit/?since=2001-01-01T00:00&until=2001-01-02T00:00").content.decode()

    assert "No events match." in body


def test_bad_date_is_reported_not_ignored(client_for, viewer, events):
    body = client_for(viewer).get("/audit/?since=yesterday-ish").content.decode()

    assert "Enter a valid date/time." in body


def test_htmx_request_gets_only_the_table_partial(client_for, viewer, events):
    response = client_for(viewer).get("/audit/?target=topic", headers={"HX-Request": "true"})

    body = response.content.decode()
    assert body.lstrip().startswith('<div id="audit-table">') and "<html" not in body


def test_csv_export_has_every_matching_event_with_before_and_after(client_for, viewer, events):
    response = client_for(viewer).get("/audit/export.csv?cluster=local")

    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [r["action"] for r in rows] == ["topic.create", "group.offsets.reset"]
    assert rows[1]["before"] == '{"orders": {"0": 5}}' and rows[1]["target"] == "group:billing"


def test_detail_shows_the_event_and_its_chain_hash(client_for, viewer, events):
    body = client_for(viewer).get("/audit/2/").content.decode()

    assert "group:billing" in body and "&quot;orders&quot;" in body


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t"])
def test_csv_export_cells_cannot_run_as_spreadsheet_formulas(client_for, admin, start):
    actor = Actor(user=admin, source="web", remote_addr="127.0.0.1")
    payload = f"{start}HYPERLINK(\"http://evil.example\",\"x\")"
    audit_record(actor=actor, action="group.delete", outcome="failure", cluster="local", target=f"group:{payload}",
                 reason=payload, error=payload)

    response = client_for(admin).get("/audit/export.csv")
    row = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))[-1]

    assert row["reason"] == "'" + payload and row["error"] == "'" + payload
    assert row["target"] == f"group:{payload}"  # starts with "group:", so it is text already


def test_json_lines_export_honours_the_filters_and_carries_the_chain(client_for, viewer, events):
    response = client_for(viewer).get("/audit/export.jsonl?cluster=local&action=offsets")

    lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert response["Content-Disposition"] == 'attachment; filename="audit.jsonl"'
    assert [(e["seq"], e["action"], e["target"]) for e in lines] == [(2, "group.offsets.reset", "group:billing")]
    assert lines[0]["before"] == {"orders": {"0": 5}} and len(lines[0]["hash"]) == len(lines[0]["prev_hash"]) == 64


def test_the_page_shows_one_row_per_action_with_its_result_and_duration(client_for, viewer, admin):
    actor = Actor(user=admin, source="web", remote_addr="127.0.0.1")
    for n in range(3):
        with audited(actor=actor, action="group.offsets.reset", cluster="local", target=f"group:g{n}",
                     before={"t": {"0": n}}) as record:
            record.after = {"t": {"0": 0}}
    assert AuditEvent.objects.count() == 6

    body = client_for(viewer).get("/audit/").content.decode()

    rows = re.findall(r'<details class="audit-action result-(\w+)"[^>]*data-seq="(\d+)"', body)
    assert rows == [("success", "6"), ("success", "4"), ("success", "2")]  # the outcome rows, newest first
    assert "(3 actions)" in body and re.search(r'class="a-took">\d+(\.\d+)? s<', body)
    assert '<a href="/audit/5/">#5 intent</a>' in body and '<a href="/audit/6/">#6 success</a>' in body


def test_an_opened_row_loads_the_full_before_and_after(client_for, viewer, events):
    partial = client_for(viewer).get("/audit/2/", headers={"HX-Request": "true"}).content.decode()

    assert partial.lstrip().startswith('<div class="event-changes"') and "<html" not in partial
    assert "&quot;orders&quot;: {\n    &quot;0&quot;: 5" in partial and "&quot;0&quot;: 0" in partial
