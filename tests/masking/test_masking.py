"""Masking on the real broker: with rules on a topic, a viewer finds no masked value on any page, search result,
shell output or export (in every format), and cannot search for one; an admin sees every byte. Rules are
changed by admins only, and audited."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from console.audit.models import AuditEvent

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
CARD, SSN, PHONE = "4111222233334444", "SSN-771-SECRET", "PHONE-555-0199"
MASKED = (CARD, SSN, PHONE, "SSN-771", "555-0199")


@pytest.fixture
def masked_topic(topic_factory, produce, admin, local_cluster):
    topic = topic_factory("masked-cards", partitions=2)
    produce(topic, [(i % 2, f"cust-{i}".encode(),
                     json.dumps({"card": CARD, "n": i, "note": f"call {PHONE} at noon"}).encode(),
                     [("ssn", SSN.encode()), ("trace", f"t{i}".encode())]) for i in range(6)])
    for select, target, action in (("jsonpath", "$.card", "keep_last"), ("header", "ssn", "hide"),
                                   ("regex", r"PHONE-\d{3}-\d{4}", "replace")):
        call_command("masking", "add", "--topics", "masked-cards-.*", "--select", select, "--target", target,
                     "--action", action, "--replacement", "[phone]", "--actor", admin.username, "--reason", "pii",
                     stdout=StringIO())
    return topic


def _leaks(text: str | bytes) -> list[str]:
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return [secret for secret in MASKED if secret in text]


def test_a_masked_field_reaches_a_viewer_nowhere_and_an_admin_everywhere(client_for, viewer, admin, masked_topic):
    topic = masked_topic
    assert AuditEvent.objects.filter(action="masking.rule.create", outcome="success").count() == 3
    base = f"/clusters/local/messages/{topic}"
    for user, masked in ((viewer, True), (admin, False)):
        client = client_for(user)
        bodies = [
            client.get(f"/clusters/local/topics/{topic}/messages/", {"partition": 0, "offset": 0}).content,
            client.get(f"{base}/search/", {"run": "1", "max_matches": "50"}).content,
            client.get(f"{base}/copy/", {"partition": 1, "offset": 0}).content,
            *(b"".join(client.get(f"{base}/export/", {"format": fmt}).streaming_content)
              for fmt in ("jsonl", "csv", "avro")),
            # The browser's default view (all partitions, newest first) reads through the search's scanner.
            client.get(f"/clusters/local/topics/{topic}/messages/").content,
        ]
        out = StringIO()
        call_command("messages", "read", "--topic", topic, "--format", "json", "--actor", user.username, stdout=out)
        target = StringIO()
        call_command("messages", "search", "--topic", topic, "--partitions", "1", "--actor", user.username,
                     stdout=target)
        for body in [*bodies, out.getvalue(), target.getvalue()]:
            assert (_leaks(body) == []) if masked else (set(_leaks(body)) >= {CARD}), body[:400]
        if masked:
            assert all("************4444" in b.decode("utf-8", "replace") for b in bodies[:2])
            assert "[phone]" in out.getvalue() and '"trace"' in out.getvalue()
        else:
            assert all(CARD in b.decode("utf-8", "replace") for b in bodies)
            assert SSN in out.getvalue() and PHONE in out.getvalue()
    # The shell without --actor reads as the least trusted reader: every rule applies.
    out = StringIO()
    call_command("messages", "read", "--topic", topic, "--format", "json", stdout=out)
    assert _leaks(out.getvalue()) == []


def test_a_viewer_cannot_search_or_export_by_a_masked_field(client_for, viewer, operator, admin, masked_topic):
    topic, base = masked_topic, f"/clusters/local/messages/{masked_topic}"
    viewer_client = client_for(viewer)
    for query in ({"value": "4111"}, {"fields": "card=" + CARD}, {"header": "ssn", "header_value": "SSN"},
                  {"jsonpath": "$.card"}):
        refused = viewer_client.get(f"{base}/search/", {"run": "1", **query})
        assert refused.status_code == 400 and "masking rules" in refused.content.decode()
        assert viewer_client.get(f"{base}/export/", {"format": "csv", **query}).status_code == 400
    found = client_for(admin).get(f"{base}/search/", {"run": "1", "value": "4111"}).content.decode()
    assert "6 matches" in found or "<strong>6</strong>" in found
    with pytest.raises(CommandError, match="masking rules"):
        call_command("messages", "search", "--topic", topic, "--value", CARD, "--actor", viewer.username)
    with pytest.raises(CommandError, match="admin role"):
        call_command("masking", "delete", "--id", "1", "--actor", viewer.username, "--reason", "no")
    assert client_for(viewer).get("/clusters/local/masking/").status_code == 403
    refused = client_for(operator).post(f"{base}/copy/", {"partition": 0, "offset": 0, "target_topic": topic,
                                                          "reason": "copy out"})
    assert refused.status_code == 403 and "Copying is refused" in refused.content.decode()
    assert AuditEvent.objects.filter(action="record.copy", outcome="refused").exists()
    rules = client_for(admin).get("/clusters/local/masking/").content.decode()
    assert "masked-cards-.*" in rules and "$.card" in rules


def test_a_masked_index_spelled_otherwise_is_refused_too(client_for, viewer, admin, topic_factory, produce,
                                                         local_cluster):
    topic = topic_factory("masked-items", partitions=1)
    produce(topic, [(0, None, json.dumps({"items": [{"card": CARD}, {"card": "5500000000000004"}]}).encode(), [])])
    call_command("masking", "add", "--topics", topic, "--select", "jsonpath", "--target", "$.items[0].card",
                 "--action", "hide", "--actor", admin.username, "--reason", "pci", stdout=StringIO())
    search = f"/clusters/local/messages/{topic}/search/"
    for path in ("items.0.card", "items.00.card", "items.0000.card"):
        refused = client_for(viewer).get(search, {"run": "1", "fields": f"{path}={CARD}"})
        assert refused.status_code == 400 and "masking rules" in refused.content.decode()
    allowed = client_for(viewer).get(search, {"run": "1", "fields": "items.1.card=5500000000000004"})
    assert allowed.status_code == 200 and CARD not in allowed.content.decode()
