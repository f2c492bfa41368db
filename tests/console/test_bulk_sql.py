"""console/bulk_sql.py on the database the run uses (SQLite, and PostgreSQL in CI's second pass, where a batch of
COPY_FROM_ROWS rows or more goes through COPY): inserts, updates on conflict, and skips on conflict the same way."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import transaction

from console import bulk_sql
from console.bulk_sql import insert_rows
from offsets.models import GroupLagStatus, LagSample

pytestmark = pytest.mark.django_db

AT = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
STATUS_FIELDS = ("cluster", "group", "status", "reason", "window", "partition_status", "totals", "sampled_at")
SAMPLE_FIELDS = ("cluster", "group", "topic", "step", "time", "lag", "lag_max", "committed", "end", "partitions")


# JSON text that COPY's text form escapes (tab, newline, backslash) and that JSON itself escapes (quotes, Unicode).
ODD_KEY = "t-0\t\\ \n \"é\u2028"


def statuses(n: int, status: str) -> list[tuple]:
    return [("bulk", f"g/{i} ‹é› \"'%", status, f"why {i}", bytes([i % 256, 0, 255]), {ODD_KEY: status},
             [i, None], AT) for i in range(n)]


@pytest.mark.parametrize("rows", [3, bulk_sql.COPY_FROM_ROWS + 50])
def test_rows_go_in_and_a_conflict_updates_what_it_is_told_to(rows):
    with transaction.atomic():
        insert_rows(GroupLagStatus, STATUS_FIELDS, statuses(rows, "OK"), conflict=("cluster", "group"),
                    update=STATUS_FIELDS[2:])
    with transaction.atomic():  # again, in one transaction with a second table staged beside it
        insert_rows(GroupLagStatus, STATUS_FIELDS, statuses(rows, "ERR"), conflict=("cluster", "group"),
                    update=STATUS_FIELDS[2:])
        samples = [("bulk", f"g{i}", "t", 0, AT, i, i, 1, 1 + i, 4) for i in range(rows)]
        insert_rows(LagSample, SAMPLE_FIELDS, samples, conflict=("cluster", "group", "topic", "step", "time"))
        insert_rows(LagSample, SAMPLE_FIELDS, [(*s[:5], 99, 99, 0, 99, 1) for s in samples],
                    conflict=("cluster", "group", "topic", "step", "time"))
    stored = {s.group: s for s in GroupLagStatus.objects.filter(cluster="bulk")}
    assert len(stored) == rows
    one = stored[f"g/{rows - 1} ‹é› \"'%"]
    assert (one.status, one.reason, bytes(one.window), one.partition_status, one.totals, one.sampled_at) == (
        "ERR", f"why {rows - 1}", bytes([(rows - 1) % 256, 0, 255]), {ODD_KEY: "ERR"}, [rows - 1, None], AT)
    lags = sorted(LagSample.objects.filter(cluster="bulk").values_list("lag", flat=True))
    assert lags == list(range(rows))  # the second insert hit every key and changed nothing


def test_a_row_of_the_wrong_width_is_refused_before_anything_is_written():
    with pytest.raises(ValueError), transaction.atomic():
        insert_rows(LagSample, SAMPLE_FIELDS, [("bulk", "g", "t", 0, AT, 1, 1, 1, 2)],
                    conflict=("cluster", "group", "topic", "step", "time"))
    assert not LagSample.objects.filter(cluster="bulk").exists()


@pytest.mark.parametrize("rows", [3, bulk_sql.COPY_FROM_ROWS + 50])
def test_unless_newer_keeps_a_stored_row_later_than_the_new_one(rows):
    from datetime import timedelta

    later, earlier = AT + timedelta(seconds=5), AT - timedelta(seconds=25)
    with transaction.atomic():
        insert_rows(GroupLagStatus, STATUS_FIELDS, [(*r[:7], later) for r in statuses(rows, "OK")],
                    conflict=("cluster", "group"), update=STATUS_FIELDS[2:])
    with transaction.atomic():  # a sweep that started before the row it meets was written
        insert_rows(GroupLagStatus, STATUS_FIELDS, [(*r[:7], earlier) for r in statuses(rows, "ERR")],
                    conflict=("cluster", "group"), update=STATUS_FIELDS[2:], unless_newer="sampled_at")
    assert set(GroupLagStatus.objects.filter(cluster="bulk").values_list("status", "sampled_at")) == {("OK", later)}
    with transaction.atomic():  # a later one replaces it
        insert_rows(GroupLagStatus, STATUS_FIELDS, [(*r[:7], later + timedelta(seconds=30))
                                                    for r in statuses(rows, "STOP")],
                    conflict=("cluster", "group"), update=STATUS_FIELDS[2:], unless_newer="sampled_at")
    assert set(GroupLagStatus.objects.filter(cluster="bulk").values_list("status", flat=True)) == {"STOP"}
