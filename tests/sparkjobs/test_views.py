"""The replay form's page through Django's test client on the real broker: the topic as a list, the chosen
topic's partitions with their offsets in a table, a link's range shown as the choice it is, and a job submitted from
choices with the ranges they mean. (No worker here: a test's transaction never commits, so nothing is queued.)"""

from __future__ import annotations

import html
import re

import pytest

from sparkjobs.models import ReplayJob

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.fixture
def source(topic_factory, produce, local_cluster):
    topic = topic_factory("replay-form", partitions=3)
    produce(topic, [(i % 3, None, b"v%d" % i, None) for i in range(30)])
    return topic


def test_the_form_lists_topics_and_the_chosen_topics_partitions(client_for, operator, source, commit):
    commit("replay-form-group", {(source, 0): 4})
    client = client_for(operator)
    page = client.get("/clusters/local/replays/new/", {"topic": source, "partitions": "1", "start": "offsets:1=4"})
    body = page.content.decode()
    assert page.status_code == 200 and f'<option value="{source}">' in body  # the topic picker's list
    assert '<option value="replay-form-group">' in body  # the groups a start can take
    assert re.search(r'name="start_kind" value="offsets"[^>]*checked', body)
    assert re.search(r'name="partitions" value="1"[^>]*checked', body)
    rows = re.findall(r'<td>(\d+)</td><td class="num">(\d+)</td><td class="num">(\d+)</td>', body)
    assert rows == [("0", "0", "10"), ("1", "0", "10"), ("2", "0", "10")]
    assert 'name="start_offset_1" value="4"' in body
    assert 'placeholder="2026-11-29T02:41:00Z"' in body
    # Choosing another topic asks again with the form's choices, and gets only the part that depends on it.
    again = client.get("/clusters/local/replays/new/", {"topic": "no-such-topic", "start_kind": "timestamp",
                                                        "start_time": "2026-11-29T02:41:00Z"},
                       headers={"HX-Request": "true"})
    part = again.content.decode()
    assert 'id="replay-bounds"' in part and "<html" not in part and "does not exist" in part
    assert re.search(r'name="start_kind" value="timestamp"[^>]*checked', part)


def test_a_replay_submitted_from_choices_has_the_ranges_they_mean(client_for, operator, source):
    response = client_for(operator).post("/clusters/local/replays/new/", {
        "topic": source, "partitions": ["0", "2"], "start_kind": "offsets", "start_offset_0": "3",
        "start_offset_2": "5", "end_kind": "offsets", "end_offset_0": "8", "end_offset_2": "", "sink": "jsonl",
        "isolation": "read_committed", "reason": "from the table"})
    assert response.status_code == 302
    job = ReplayJob.objects.get()
    assert (job.start_spec, job.end_spec) == ("offsets:0=3,2=5", "offsets:0=8")
    assert job.ranges == {"0": [3, 8], "2": [5, 10]} and job.planned_records == 10


def test_refusals_are_at_their_fields(client_for, operator, source):
    response = client_for(operator).post("/clusters/local/replays/new/", {
        "topic": source, "start_kind": "timestamp", "start_time": "11/29/2026 2:41 PM", "end_kind": "latest",
        "sink": "jsonl", "isolation": "read_committed", "reason": "r"}, headers={"HX-Request": "true"})
    body = html.unescape(response.content.decode())
    assert response.status_code == 400 and 'data-field="start_time"' in body and "ISO 8601" in body
    assert not ReplayJob.objects.exists()
