"""The transactions pages on the real broker: the list with descriptions, one id, the hanging search, and the
abort's guards (admin only; refused with the reason when the transaction is not hanging)."""

from __future__ import annotations

import pytest

from console.audit.models import AuditEvent

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def test_pages_show_the_open_transaction_and_search_finds_nothing_hanging(open_transaction, client_for, viewer):
    topic, transactional_id = open_transaction
    client = client_for(viewer)
    listing = client.get("/clusters/local/transactions/").content.decode()
    assert transactional_id in listing and "Ongoing" in listing
    detail = client.get(f"/clusters/local/transactions/id/{transactional_id}/").content.decode()
    assert f"{topic}</a>-0" in detail and f"{topic}</a>-1" in detail
    found = client.get("/clusters/local/transactions/hanging/", {"topic": topic, "max_timeout": 0},
                       headers={"HX-Request": "true"}).content.decode()
    assert "No hanging transaction on" in found
    missing = client.get("/clusters/local/transactions/id/no-such-id/")
    assert missing.status_code == 404 and "not known to any transaction coordinator" in missing.content.decode()


def test_abort_is_for_admins_and_refused_for_a_transaction_that_is_not_hanging(open_transaction, client_for,
                                                                               operator, admin):
    topic, _ = open_transaction
    form = {"topic": topic, "partition": 0, "start_offset": 1, "max_timeout": 0, "confirm": "0", "reason": "r"}
    assert client_for(operator).post("/clusters/local/transactions/abort/preview/", form).status_code == 403
    assert client_for(operator).post("/clusters/local/transactions/abort/", form).status_code == 403
    refused = client_for(admin).post("/clusters/local/transactions/abort/", form, headers={"HX-Request": "true"})
    assert refused.status_code == 409 and "is not hanging: its coordinator still tracks it" in refused.content.decode()
    assert AuditEvent.objects.get(action="transaction.abort").outcome == "refused"
