"""The message browser's pages through Django's test client on the real broker: one line per record newest first,
the next page and the live tail as fragments, the link to one record, refusals that keep the page, saved filters."""

from __future__ import annotations

import html
import re

import pytest

from records.models import SavedFilter
from records.saved_filters import MSG_NOT_FOUND

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
HTMX = {"HX-Request": "true"}


def _rows(body: str) -> list[tuple[int, int]]:
    return [(int(p), int(o)) for p, o in re.findall(r'<div class="record[^"]*" id="r-(\d+)-(\d+)"', body)]


def _more_url(body: str) -> str:
    return html.unescape(re.search(r'class="load-more"><a class="button" href="([^"]+)"', body).group(1))


@pytest.fixture
def three_partitions(topic_factory, produce, local_cluster):
    topic = topic_factory("browse-page", partitions=3)
    produce(topic, [(i % 3, f"order-{i}".encode(), b'{"order": %d, "note": "x"}' % i, [("trace", b"t%d" % i)])
                    for i in range(90)])
    return topic


def test_the_page_lists_newest_first_across_partitions_one_line_each(client_for, viewer, three_partitions):
    url = f"/clusters/local/topics/{three_partitions}/messages/"
    response = client_for(viewer).get(url)
    body = response.content.decode()
    rows = _rows(body)
    assert response.status_code == 200 and len(rows) == 50 and {p for p, _ in rows} == {0, 1, 2}
    assert rows[0] in {(2, 29), (1, 29), (0, 29)}  # the last record written
    assert '<option value="2">Partition 2</option>' in body and '>All partitions</option>' in body
    assert "Newest first" in body and 'id="tail"' in body and "order-89" in body
    # The row menu holds the actions; the record link is stable: cluster, topic, partition, offset.
    assert f"/clusters/local/topics/{three_partitions}/messages/2/29/" in body
    assert body.count('class="row-menu record-menu"') == 50 and "Replay from here" in body


def test_load_more_is_a_fragment_going_on_from_the_cursor(client_for, viewer, three_partitions):
    client = client_for(viewer)
    first = client.get(f"/clusters/local/topics/{three_partitions}/messages/").content.decode()
    more = client.get(_more_url(first), headers=HTMX)
    body = more.content.decode()
    assert more.status_code == 200 and "<html" not in body and 'id="browse-form"' not in body
    assert len(_rows(body)) == 40 and not set(_rows(first)) & set(_rows(body))
    assert "The oldest record of the range is above." in body  # 90 records: nothing left after 50 + 40


def test_the_tail_answers_204_until_something_arrives(client_for, viewer, three_partitions, produce):
    client = client_for(viewer)
    first = client.get(f"/clusters/local/topics/{three_partitions}/messages/").content.decode()
    tail_url = html.unescape(re.search(r'id="tail" hx-get="([^"]+)"', first).group(1))
    tops = re.search(r'id="tail-cursor" name="tops" value="([^"]+)"', first).group(1)
    assert tops == "0:30,1:30,2:30"
    tail_url += f"&tops={tops}"  # what hx-include adds
    assert client.get(tail_url, headers=HTMX).status_code == 204
    produce(three_partitions, [(1, b"late", b"arrived after", None)])
    fresh = client.get(tail_url, headers=HTMX)
    body = fresh.content.decode()
    assert fresh.status_code == 200 and _rows(body) == [(1, 30)] and "record fresh" in body
    assert 'id="tail-cursor" name="tops" value="0:30,1:31,2:30" hx-swap-oob="true"' in body


def test_a_record_link_opens_the_browser_on_it_expanded(client_for, viewer, three_partitions):
    response = client_for(viewer).get(f"/clusters/local/topics/{three_partitions}/messages/1/7/")
    body = response.content.decode()
    assert response.status_code == 200 and _rows(body)[0] == (1, 7)
    opened = re.search(r'id="r-1-7" role="listitem">\s*<details class="record-row" open>', body)
    assert opened and "order-22" in body and 'id="tail"' not in body  # 22 = the 8th record of partition 1


def test_one_partition_is_a_list_of_the_topics_partitions_and_an_unknown_one_keeps_the_page(
        client_for, viewer, three_partitions):
    client = client_for(viewer)
    one = client.get(f"/clusters/local/topics/{three_partitions}/messages/", {"partition": 1, "limit": 5})
    assert _rows(one.content.decode()) == [(1, o) for o in range(29, 24, -1)]
    missing = client.get(f"/clusters/local/topics/{three_partitions}/messages/", {"partition": 9})
    body = missing.content.decode()
    assert missing.status_code == 400 and f"Topic &#x27;{three_partitions}&#x27; has no partition 9; it has 0 to 2" in body
    assert 'id="browse-form"' in body and '<option value="2">Partition 2</option>' in body  # no dead end
    refused = client.get(f"/clusters/local/topics/{three_partitions}/messages/", {"partition": 9}, headers=HTMX)
    assert refused.status_code == 400 and 'data-field="partition"' in refused.content.decode()
    bad_time = client.get(f"/clusters/local/topics/{three_partitions}/messages/", {"start": "time", "since": "11/29/2026 2:41 PM"})
    assert bad_time.status_code == 400 and "ISO 8601" in bad_time.content.decode()
    bad_cursor = client.get(f"/clusters/local/topics/{three_partitions}/messages/", {"after": "0:1;drop"})
    assert bad_cursor.status_code == 400 and "partition:offset pairs" in bad_cursor.content.decode()


def test_binary_keys_show_as_hex_never_blank(client_for, viewer, topic_factory, produce, local_cluster):
    topic = topic_factory("browse-binary")
    produce(topic, [(0, b"\x00\x07", b"\x01\x02text", None), (0, b"tab\there", b"line\nbreak", None)])
    body = client_for(viewer).get(f"/clusters/local/topics/{topic}/messages/").content.decode()
    assert '<small class="kind">hex</small> 00 07' in body and '<small class="kind">hex</small> 01 02 74 65 78 74' in body
    assert "tab\there" in body and '<small class="tag">text</small>' in body


def test_filters_in_the_url_and_saved_per_person_and_cluster(client_for, viewer, operator, three_partitions):
    client = client_for(viewer)
    url = f"/clusters/local/topics/{three_partitions}/messages/"
    found = client.get(url, {"key": "order-4", "start": "oldest"}).content.decode()
    assert sorted(_rows(found)) == sorted([(1, 1), (1, 13), (2, 13), (0, 14), (1, 14), (2, 14), (0, 15), (1, 15),
                                           (2, 15), (0, 16), (1, 16)])
    saved = client.post(f"/clusters/local/messages/{three_partitions}/filters/",
                        {"name": "  fours ", "key": "order-4", "start": "oldest"})
    assert saved.status_code == 302 and saved["Location"] == f"{url}?start=oldest&key=order-4"
    page = client.get(url).content.decode()
    assert f'href="{url}?start=oldest&amp;key=order-4">fours</a>' in page
    theirs = client_for(operator).get(url).content.decode()
    assert ">fours</a>" not in theirs  # another person's filters are theirs
    mine = SavedFilter.objects.get(name="fours")
    refused = client_for(operator).post(f"/clusters/local/messages/filters/{mine.pk}/delete/")
    assert refused.status_code == 400 and html.escape(MSG_NOT_FOUND.format(id=mine.pk)) in refused.content.decode()
    assert client_for(viewer).post(f"/clusters/local/messages/filters/{mine.pk}/delete/").status_code == 302
    assert not SavedFilter.objects.exists()
    nameless = client_for(viewer).post(f"/clusters/local/messages/{three_partitions}/filters/", {"name": " "})
    assert nameless.status_code == 400 and not SavedFilter.objects.exists()
