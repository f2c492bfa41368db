"""An operator in the browser: produce an Avro, a Protobuf and a JSON Schema record through a registry subject, see
each decoded with its subject and schema, find it with a field search that streams its matches, open its schema."""

from __future__ import annotations

import json

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from console.audit.models import AuditEvent

pytestmark = [pytest.mark.kafka, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AVRO = json.dumps({"type": "record", "name": "Payment", "fields": [
    {"name": "id", "type": "string"}, {"name": "country", "type": "string"}, {"name": "amount", "type": "long"}]})
PROTO = """syntax = "proto3";
package pay;
message Payment { string id = 1; string country = 2; int64 amount = 3; }
"""
JSON_SCHEMA = json.dumps({"type": "object", "properties": {"id": {"type": "string"}, "country": {"type": "string"},
                                                           "amount": {"type": "integer"}},
                          "required": ["id", "country", "amount"]})


@pytest.mark.parametrize("kind, schema_type, text", [("avro", "AVRO", AVRO), ("protobuf", "PROTOBUF", PROTO),
                                                     ("json-schema", "JSON", JSON_SCHEMA)])
def test_produce_browse_search_and_schema_in_the_browser(kind, schema_type, text, logged_in_page, make_user,
                                                          registry_cluster, schema_registry, topic_factory, produce,
                                                          tmp_path):
    topic = topic_factory("browser-payments", partitions=2)
    subject = f"{topic}-value"
    schema_id = SchemaRegistryClient({"url": schema_registry.url}).register_schema(subject, Schema(text, schema_type))
    produce(topic, [(i % 2, None, f"plain record {i}".encode(), None) for i in range(300)])
    page = logged_in_page(make_user("browser-operator", "operator"))

    page.goto(f"/clusters/local/messages/{topic}/produce/")
    page.fill("input[name=key]", "pay-1")
    page.fill("textarea[name=value]", '{"id": "pay-1", "country": "NO", "amount": 1250}')
    page.select_option("select[name=value_subject]", subject)  # the registry's subjects, as a list
    page.fill("input[name=reason]", "browser test")
    page.click("button:has-text('Send')")
    page.wait_for_url(f"**/topics/{topic}/messages/**")
    page.get_by_text("Record written to").wait_for()
    # The record link opens the written record, its value decoded with the subject that encoded it.
    value_part = page.locator(".record-row[open] .record-part").first
    value_part.locator(".json-tree").wait_for()
    assert value_part.locator(".tag").first.inner_text() == kind
    assert '"country": "NO"' in value_part.inner_text() and f"{subject} v1 · id {schema_id}" in value_part.inner_text()

    page.goto(f"/clusters/local/messages/{topic}/search/")
    page.get_by_text("More filters").click()  # the common filters show, the field equality is among the rest
    page.fill("textarea[name=fields]", "country=NO")
    page.click("button:has-text('Search')")
    page.locator(".search-ending").wait_for()
    assert "Scanned the whole range." in page.locator("#search-progress").inner_text()
    assert "301 of 301 offsets" in page.locator("#search-progress").inner_text()
    rows = page.locator("#matches .record")
    assert rows.count() == 1 and "pay-1" in rows.first.inner_text()
    rows.first.locator("summary.record-line").click()
    page.screenshot(path=str(tmp_path / f"search-{kind}.png"), full_page=True)

    rows.first.locator("a.schema-link").first.click()
    page.wait_for_url(f"**/schemas/ids/{schema_id}/")
    assert ('"required"' if kind == "json-schema" else "Payment") in page.locator("pre").inner_text()
    event = AuditEvent.objects.get(action="record.produce", outcome="success")
    assert event.actor_name == "browser-operator" and event.params["value"]["schema"]["subject"] == subject
