"""The message pages through Django's test client on the real broker: search steps until done, stop, produce
and copy as an operator (a viewer is refused), reset-to-here links for groups with any name."""

from __future__ import annotations

import html
import re

import pytest
from django.utils.html import escape

from console.accounts.roles import MSG_ROLE_REQUIRED
from console.audit.models import AuditEvent
from records.selectors import record_at

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def _token(body: str) -> str | None:
    found = re.search(r'name="state" value="([^"]+)"', body)
    return html.unescape(found.group(1)) if found else None


def test_search_page_steps_until_done(client_for, viewer, topic_factory, produce, local_cluster):
    topic = topic_factory("page-search", partitions=2)
    produce(topic, [(i % 2, None, f"row {i} {'hit' if i % 10 == 0 else 'miss'}".encode(), None) for i in range(200)])
    client = client_for(viewer)
    url = f"/clusters/local/messages/{topic}/search/"
    first = client.get(url, {"run": "1", "value": "hit", "max_matches": "500"})
    assert first.status_code == 200
    body = first.content.decode()
    offsets = set(re.findall(r'id="r-(\d+)-(\d+)"', body))
    token = _token(body)
    while token:  # what the page's polling (or the no-JavaScript Continue button) does
        step = client.get(url + "step/", {"state": token}, headers={"HX-Request": "true"})
        assert step.status_code == 200
        offsets |= set(re.findall(r'id="r-(\d+)-(\d+)"', step.content.decode()))
        token = _token(step.content.decode()) if 'data-done="false"' in step.content.decode() else None
        body = step.content.decode()
    assert len(offsets) == 20
    assert "Scanned the whole range." in body and "200 of 200 offsets" in body


def test_search_refusals_and_stop(client_for, viewer, topic_factory, local_cluster):
    topic = topic_factory("page-search-bad", partitions=1)
    client = client_for(viewer)
    url = f"/clusters/local/messages/{topic}/search/"
    bad = client.get(url, {"run": "1", "value_regex": "(unclosed"})
    assert bad.status_code == 400 and "does not compile" in bad.content.decode()
    bad = client.get(url, {"run": "1", "start": "yesterday-ish"})
    assert bad.status_code == 400 and "is not a position" in bad.content.decode()
    forged = client.get(url + "step/", {"state": "not-a-token"})
    assert forged.status_code == 400 and "not recognised" in forged.content.decode()


def test_produce_and_copy_pages(client_for, viewer, operator, topic_factory, local_cluster):
    topic, dlq = topic_factory("page-produce", partitions=1), topic_factory("page-dlq", partitions=1)
    url = f"/clusters/local/messages/{topic}/produce/"
    assert client_for(viewer).get(url).status_code == 200
    form = {"key": "k1", "value": "hello <script>", "headers": "trace=1", "reason": "test"}
    refused = client_for(viewer).post(url, form)
    assert refused.status_code == 403 and not AuditEvent.objects.filter(action="record.produce").exists()
    done = client_for(operator).post(url, form)
    assert done.status_code == 302 and done["Location"] == f"/clusters/local/topics/{topic}/messages/0/0/"
    assert record_at("local", topic, 0, 0).value == b"hello <script>"
    browse = client_for(viewer).get(done["Location"]).content.decode()
    assert "hello &lt;script&gt;" in browse and "<script>" not in browse.split("<main")[-1].split("</main>")[0] \
        .replace("<script>", "", 0)
    copy_url = f"/clusters/local/messages/{topic}/copy/"
    page = client_for(viewer).get(copy_url, {"partition": 0, "offset": 0})
    assert page.status_code == 200 and "hello &lt;script&gt;" in page.content.decode()
    assert client_for(viewer).post(copy_url, {"partition": 0, "offset": 0, "target_topic": dlq,
                                              "reason": "x"}).status_code == 403
    copied = client_for(operator).post(copy_url, {"partition": 0, "offset": 0, "target_topic": dlq, "reason": "dlq"})
    assert copied.status_code == 302
    assert record_at("local", dlq, 0, 0).value == b"hello <script>"


def test_the_produce_form_checks_json_and_takes_headers_as_rows(client_for, operator, topic_factory, local_cluster):
    from records.forms import MSG_HEADER_NAME

    topic = topic_factory("page-produce-rows", partitions=2)
    url = f"/clusters/local/messages/{topic}/produce/"
    page = client_for(operator).get(url).content.decode()
    assert '<option value="1">1</option>' in page and "by the key&#x27;s hash" in page  # the topic's partitions
    assert 'data-json-check' in page and 'name="header_name"' in page
    broken = client_for(operator).post(url, {"value_format": "json", "value": '{"a": 1,\n "b": }', "reason": "x"},
                                       headers={"HX-Request": "true"})
    body = broken.content.decode()
    assert broken.status_code == 400 and 'data-field="value"' in body and "line 2, column 7" in body
    nameless = client_for(operator).post(url, {"value_format": "text", "value": "v", "header_name": ["a", ""],
                                               "header_value": ["1", "2"], "reason": "x"})
    assert nameless.status_code == 400 and MSG_HEADER_NAME.format(number=2) in html.unescape(nameless.content.decode())
    assert client_for(operator).post(url, {"value": "v", "partition": "5", "reason": "x"}).status_code == 400
    done = client_for(operator).post(url, {"key": "k", "value_format": "json", "value": '{"a": 1}', "partition": "1",
                                           "header_name": ["trace", "", "span"], "header_value": ["t-1", "", ""],
                                           "reason": "rows"})
    assert done.status_code == 302 and done["Location"].endswith("/messages/1/0/")
    written = record_at("local", topic, 1, 0)
    assert written.value == b'{"a": 1}' and list(written.headers) == [("trace", b"t-1"), ("span", b"")]


def test_reset_here_lists_groups_with_any_name(client_for, viewer, operator, topic_factory, produce, commit,
                                               local_cluster):
    topic = topic_factory("page-reset-here", partitions=2)
    produce(topic, [(1, None, b"x", None)] * 5)
    odd = 'billing / "prod" #1 <b>ü</b> 100%'
    commit(odd, {(topic, 1): 2})
    commit("other-group", {(topic, 0): 0})
    page = client_for(viewer).get(f"/clusters/local/messages/{topic}/reset-here/", {"partition": 1, "offset": 4})
    body = page.content.decode()
    assert page.status_code == 200 and escape(odd) in body and "<b>ü</b>" not in body
    link = html.unescape(re.search(r'href="([^"]*/reset/\?[^"]*)"', body).group(1))
    refused = client_for(viewer).get(link)
    assert refused.status_code == 403
    refusal = MSG_ROLE_REQUIRED.format(required="operator", who="vera", current="viewer")
    assert escape(refusal) in refused.content.decode()
    reset = client_for(operator).get(link)
    assert reset.status_code == 200 and 'value="4"' in reset.content.decode()


def test_schema_pages(client_for, viewer, local_cluster, registry_cluster, schema_registry):
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    schema = '{"type": "record", "name": "Shipment", "fields": [{"name": "id", "type": "string"}]}'
    schema_id = SchemaRegistryClient({"url": schema_registry.url}).register_schema("shipments-value",
                                                                                   Schema(schema, "AVRO"))
    client = client_for(viewer)
    listing = client.get("/clusters/local/messages/schemas/").content.decode()
    assert "shipments-value" in listing and schema_registry.url in listing
    detail = client.get(f"/clusters/local/messages/schemas/ids/{schema_id}/").content.decode()
    assert "Shipment" in detail and "shipments-value" in detail
    by_subject = client.get("/clusters/local/messages/schemas/subjects/shipments-value/versions/1/")
    assert by_subject.status_code == 200 and "Shipment" in by_subject.content.decode()
    missing = client.get("/clusters/local/messages/schemas/subjects/no-such-subject/")
    assert missing.status_code == 400 and "HTTP 404" in missing.content.decode()
    registry_cluster.schema_registry_url = ""
    registry_cluster.save()
    assert "has no schema registry" in client.get("/clusters/local/messages/schemas/").content.decode()


def test_any_key_value_or_header_renders_in_browse_and_search(client_for, viewer, topic_factory, local_cluster,
                                                               kafka_node):
    """Generated records (any bytes, any Unicode, markup, header names with anything) never break a page."""
    from confluent_kafka import Producer
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    topic = topic_factory("hostile-records", partitions=1)
    client = client_for(viewer)
    producer = Producer({"bootstrap.servers": kafka_node.bootstrap})
    blobs = st.one_of(st.none(), st.binary(max_size=40), st.text(max_size=40).map(str.encode),
                      st.sampled_from([b"<script>alert(1)</script>", b"\x00\x00\x00\x00\x07\xff", b'{"a": "</pre>"}']))

    # Header names without NUL: Django's forms refuse NUL in any field (a clear 400, tested elsewhere).
    names = st.text(st.characters(blacklist_characters="\x00"), min_size=1, max_size=20)

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
    @given(key=blobs, value=blobs, header=names, header_value=blobs)
    def check(key, value, header, header_value):
        producer.produce(topic, key=key, value=value, headers=[(header, header_value)])
        producer.flush(10)
        browse = client.get(f"/clusters/local/topics/{topic}/messages/", {"partition": 0})
        search = client.get(f"/clusters/local/messages/{topic}/search/", {"run": "1", "header": header})
        assert browse.status_code == 200 and search.status_code == 200
        for body in (browse.content.decode(), search.content.decode()):
            assert "<script>alert(1)</script>" not in body
        assert 'id="search-progress"' in search.content.decode()

    check()
