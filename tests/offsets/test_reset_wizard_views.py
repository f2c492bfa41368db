"""The reset wizard's page on the real broker: the picker, previews and executes with and without htmx, bad input,
roles, and the links that open it prefilled (lag chart, message browser)."""

import html
import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from console.audit.models import AuditEvent
from console.clusters.selectors import cluster_admin
from gateway.kafka.types import PartitionRef
from offsets.resets.form_input import MSG_NOTHING_CHOSEN

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
HTMX = {"HX-Request": "true"}


def _committed(group):
    return cluster_admin("local").group_offsets([group])[group]


def _oslo_input(epoch_ms: int) -> str:
    """A moment as Oslo's wall clock in a datetime-local input, to the millisecond."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, ZoneInfo("Europe/Oslo"))
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"


def _carried(body: str) -> list[tuple[str, str]]:
    form = body.split('id="reset-execute"')[1].split("</form>")[0]
    return [(html.unescape(n), html.unescape(v)) for n, v in re.findall(r'name="([^"]+)" value="([^"]*)"', form)
            if n != "csrfmiddlewaretoken"]


def test_the_picker_lists_the_groups_partitions_with_offset_and_lag(client_for, operator, seeded, local_cluster):
    group, topic = seeded["group"], seeded["topic"]
    body = client_for(operator).get(f"/clusters/local/groups/{group}/reset/").content.decode()

    assert f'name="topic" value="{topic}"' in body and "whole topic, 3 partitions, lag 15" in body
    picks = re.findall(r'value="' + re.escape(topic) + r':(\d)"[^>]*> partition \d <span class="hint">([^<]+)<', body)
    assert picks == [("0", "at 8, lag 12"), ("1", "at 2, lag 3"), ("2", "no commit")]
    assert '<option value="Europe/Oslo">' in body and 'type="datetime-local"' in body
    assert '<option value="from-group">' in body and 'enctype="multipart/form-data"' in body


def test_ticked_partitions_to_a_time_in_a_zone_preview_with_totals_then_execute(client_for, operator, seeded,
                                                                                local_cluster):
    group, topic, base = seeded["group"], seeded["topic"], seeded["base"]
    client = client_for(operator)
    # p0's records are a minute apart from `base`: the first at or after base + 10 min is offset 10. p1's five are
    # all older, so p1 goes to its end (5), as Kafka's tool does.
    form = {"scope": "chosen", "partition": [f"{topic}:0", f"{topic}:1"], "strategy": "to-datetime",
            "at": _oslo_input(base + 10 * 60_000), "zone": "Europe/Oslo"}

    body = client.post(f"/clusters/local/groups/{group}/reset/", form, headers=HTMX).content.decode()

    totals = re.search(r'<table class="grid[^"]* totals".*?</table>', body, re.S).group(0)
    assert f'<th scope="row">{topic}</th><td>2</td><td>0</td><td>5</td>' in totals  # 2 + 3 records skipped
    assert re.search(re.escape(f"--to-datetime {form['at']}") + r"\+0[12]:00", body)  # Oslo's offset then
    assert _committed(group) == {PartitionRef(topic, 0): 8, PartitionRef(topic, 1): 2}

    fingerprint = body.split('name="fingerprint" value="')[1].split('"')[0]
    execute = _as_lists(_carried(body) + [("reason", "replay"), ("confirm", group)])
    assert execute["fingerprint"] == [fingerprint] and "at" not in execute  # the resolved time is carried
    executed = client.post(f"/clusters/local/groups/{group}/reset/execute/", execute, headers=HTMX)
    assert executed.headers["HX-Redirect"].endswith(f"/groups/{group}/")
    assert _committed(group) == {PartitionRef(topic, 0): 10, PartitionRef(topic, 1): 5}


def test_without_javascript_the_page_comes_back_whole_and_executes_with_a_redirect(client_for, operator, seeded,
                                                                                  local_cluster):
    group, topic = seeded["group"], seeded["topic"]
    client = client_for(operator)
    form = {"scope": "chosen", "topic": topic, "strategy": "to-offset", "offset": "5"}

    page = client.post(f"/clusters/local/groups/{group}/reset/", form)
    body = page.content.decode()

    assert page.status_code == 200 and "<html" in body and 'id="reset-form"' in body
    assert re.search(f'name="topic" value="{topic}"[^>]* checked', body)  # the form as it was sent
    assert re.search(r'name="offset" value="5"', body) and '<option value="to-offset" selected>' in body
    # p0 8 -> 5 re-reads 3, p1 2 -> 5 skips 3, p2 has no commit (and is empty: clamped to 0)
    assert f'<th scope="row">{topic}</th><td>3</td><td>3</td><td>3</td>' in body and "1 partition of" in body
    execute = _as_lists(_carried(body) + [("reason", "back to 5"), ("confirm", group)])
    done = client.post(f"/clusters/local/groups/{group}/reset/execute/", execute)
    assert done.status_code == 302 and done.headers["Location"].endswith(f"/groups/{group}/")
    assert _committed(group) == {PartitionRef(topic, 0): 5, PartitionRef(topic, 1): 5, PartitionRef(topic, 2): 0}


def test_an_uploaded_plan_is_previewed_exported_and_carried_to_execute(client_for, operator, seeded, local_cluster):
    from django.core.files.uploadedfile import SimpleUploadedFile

    group, topic = seeded["group"], seeded["topic"]
    client = client_for(operator)
    plan = f"{topic},0,5\r\n{topic},1,4\r\n".encode()
    upload = SimpleUploadedFile("plan.csv", plan, content_type="text/csv")

    body = client.post(f"/clusters/local/groups/{group}/reset/",
                       {"scope": "chosen", "strategy": "from-file", "csv_file": upload}, headers=HTMX).content.decode()

    assert f'<th scope="row">{topic}</th><td>2</td><td>3</td><td>2</td>' in body  # p0 8 -> 5, p1 2 -> 4
    export = re.search(r'href="([^"]*/reset/export\.csv\?[^"]*)"', body).group(1)
    assert client.get(html.unescape(export)).content.decode() == f"{topic},0,5\n{topic},1,4\n"
    execute = _as_lists(_carried(body) + [("reason", "from a plan"), ("confirm", group)])
    assert execute["value"] == [plan.decode()]
    client.post(f"/clusters/local/groups/{group}/reset/execute/", execute, headers=HTMX)
    assert _committed(group) == {PartitionRef(topic, 0): 5, PartitionRef(topic, 1): 4}


def test_bad_input_is_a_clear_message_and_changes_nothing(client_for, operator, seeded, local_cluster):
    group, topic = seeded["group"], seeded["topic"]
    client = client_for(operator)

    bad_date = client.post(f"/clusters/local/groups/{group}/reset/",
                           {"scope": "all", "strategy": "to-datetime", "at": "2026-02-30T01:00"}, headers=HTMX)
    assert bad_date.status_code == 400 and "is not a date and time" in bad_date.content.decode()
    nothing = client.post(f"/clusters/local/groups/{group}/reset/", {"scope": "chosen", "strategy": "to-latest"})
    body = nothing.content.decode()
    assert nothing.status_code == 400 and "<html" in body and html.escape(MSG_NOTHING_CHOSEN) in body
    ghost = client.post(f"/clusters/local/groups/{group}/reset/",
                        {"scope": "chosen", "other_topics": "no-such-topic", "strategy": "to-latest"})
    assert ghost.status_code == 404 and "Topic &#x27;no-such-topic&#x27; does not exist" in ghost.content.decode()
    assert 'value="no-such-topic"' in ghost.content.decode()  # still in the form, to correct
    assert _committed(group) == {PartitionRef(topic, 0): 8, PartitionRef(topic, 1): 2}
    assert not AuditEvent.objects.exists()


def test_viewers_get_403_on_every_reset_request(client_for, viewer, seeded, local_cluster):
    group, topic = seeded["group"], seeded["topic"]
    client = client_for(viewer)
    form = {"scope": "chosen", "partition": f"{topic}:0", "strategy": "to-offset", "offset": "3"}

    assert client.get(f"/clusters/local/groups/{group}/reset/").status_code == 403
    assert client.post(f"/clusters/local/groups/{group}/reset/", form).status_code == 403
    assert client.post(f"/clusters/local/groups/{group}/reset/", form, headers=HTMX).status_code == 403
    assert client.get(f"/clusters/local/groups/{group}/reset/export.csv", form).status_code == 403
    assert client.post(f"/clusters/local/groups/{group}/reset/execute/",
                       {**form, "fingerprint": "x", "reason": "r", "confirm": group}).status_code == 403
    assert _committed(group)[PartitionRef(topic, 0)] == 8


def test_reset_to_here_from_a_record_lands_in_the_wizard_prefilled(client_for, operator, seeded, local_cluster):
    group, topic = seeded["group"], seeded["topic"]
    client = client_for(operator)
    listing = client.get(f"/clusters/local/messages/{topic}/reset-here/", {"partition": 0, "offset": 6})
    link = next(html.unescape(href) for href in re.findall(r'href="([^"]*/reset/\?[^"]*)"', listing.content.decode())
                if f"/groups/{group}/" in href)

    body = client.get(link).content.decode()

    assert re.search(f'value="{topic}:0"[^>]* checked', body) and not re.search(f'value="{topic}:1"[^>]* checked', body)
    assert '<option value="to-offset" selected>' in body and re.search(r'name="offset" value="6"', body)


def test_the_lag_chart_has_reset_to_here_links_for_operators_only(client_for, operator, viewer, seeded,
                                                                  local_cluster):
    from offsets.models import LagSample

    group, topic = seeded["group"], seeded["topic"]
    now = datetime.now(UTC).replace(microsecond=0)
    LagSample.objects.bulk_create(
        LagSample(cluster="local", group=group, topic=topic, step=0, time=now - timedelta(seconds=30 * i), lag=15,
                  lag_max=15, committed=10, end=25, partitions=2) for i in range(10))
    oldest = (now - timedelta(seconds=270)).strftime("%Y-%m-%dT%H:%M:%S")

    page = client_for(operator).get(f"/clusters/local/groups/{group}/", {"tab": "history"}).content.decode()
    links = [html.unescape(h) for h in re.findall(r'<a class="reset-point" href="([^"]+)"', page)]
    assert 'aria-current="true">fit (15 min)<' in page  # five minutes of samples fill a 15-minute frame
    assert 5 <= len(links) <= 10  # 24 slices of 37.5 s over 30-second samples: one dot per slice with a sample
    assert links[0].endswith(f"?scope=chosen&topic={topic}&strategy=to-datetime&at={oldest}&zone=UTC")
    wizard = client_for(operator).get(links[0]).content.decode()
    assert re.search(f'name="topic" value="{topic}"[^>]* checked', wizard)
    assert '<option value="to-datetime" selected>' in wizard and f'value="{oldest}"' in wizard

    seen_by_viewer = client_for(viewer).get(f"/clusters/local/groups/{group}/", {"tab": "history"}).content.decode()
    assert "reset-point" not in seen_by_viewer and seen_by_viewer.count('class="sample-point"') == len(links)


def _as_lists(pairs):
    data: dict[str, list[str]] = {}
    for name, value in pairs:
        data.setdefault(name, []).append(value)
    return data


def test_the_default_scope_is_every_topic_with_commits_and_previews_with_nothing_ticked(client_for, operator, seeded,
                                                                                      local_cluster):
    group, topic = seeded["group"], seeded["topic"]
    client = client_for(operator)
    page = client.get(f"/clusters/local/groups/{group}/reset/").content.decode()
    default = re.search(r'<select name="scope"[^>]*>.*?<option value="(\w+)" selected>([^<]+)<', page, re.S)
    assert default.groups() == ("all", "all topics with commits (--all-topics)")
    assert not re.search(r'name="(topic|partition)"[^>]* checked', page)

    preview = client.post(f"/clusters/local/groups/{group}/reset/", {"scope": default.group(1),
                                                                     "strategy": "to-latest"}, headers=HTMX)

    assert preview.status_code == 200  # p0 8 -> 20 and p1 2 -> 5: lag 15 now, none after
    assert f'<th scope="row">{topic}</th><td>2</td><td>0</td><td>15</td><td class="lag-change">15 → 0</td>' in \
        preview.content.decode()


def test_an_unknown_source_group_is_named_as_not_existing_with_the_closest_names(client_for, operator, seeded,
                                                                                commit, local_cluster):
    from offsets.resets.strategy_input import MSG_SOURCE_EMPTY, MSG_SOURCE_UNKNOWN

    group, topic = seeded["group"], seeded["topic"]
    source = f"{group}-source"
    commit(source, {(topic, 0): 4})
    client = client_for(operator)
    typo = f"{group}-sorce"

    refused = client.post(f"/clusters/local/groups/{group}/reset/",
                          {"scope": "all", "strategy": "from-group", "source_group": typo}, headers=HTMX)

    body = html.unescape(refused.content.decode())
    assert refused.status_code == 400 and 'data-field="source_group"' in body
    assert MSG_SOURCE_UNKNOWN.format(source=typo, cluster="local") in body
    assert re.search(r"The closest names: [^.]*'" + re.escape(source) + "'", body)
    whole_page = client.post(f"/clusters/local/groups/{group}/reset/",  # without JavaScript: at the field too
                             {"scope": "all", "strategy": "from-group", "source_group": typo}).content.decode()
    assert re.search(r'has-error">Copy from group <input[^>]*value="' + re.escape(typo), whole_page)
    copied = client.post(f"/clusters/local/groups/{group}/reset/",
                         {"scope": "all", "strategy": "from-group", "source_group": source}, headers=HTMX)
    assert copied.status_code == 200 and "--from-group" not in MSG_SOURCE_EMPTY
    assert _committed(group) == {PartitionRef(topic, 0): 8, PartitionRef(topic, 1): 2}


def test_the_message_after_a_reset_links_its_audit_event_and_its_revert(client_for, operator, seeded, local_cluster):
    group, topic = seeded["group"], seeded["topic"]
    client = client_for(operator)
    form = {"scope": "all", "strategy": "to-latest"}
    body = client.post(f"/clusters/local/groups/{group}/reset/", form, headers=HTMX).content.decode()
    execute = _as_lists(_carried(body) + [("reason", "skip the backlog"), ("confirm", group)])

    page = client.post(f"/clusters/local/groups/{group}/reset/execute/", execute, follow=True).content.decode()

    outcome = AuditEvent.objects.get(action="group.offsets.reset", outcome="success")
    flash = page.split('id="flash"')[1].split("</div>")[0]
    assert f'<a href="/audit/{outcome.seq}/">Audit event #{outcome.seq}</a>' in flash
    assert f'href="/clusters/local/groups/{group}/revert/{outcome.seq}/"' in flash
    revert = client.get(f"/clusters/local/groups/{group}/revert/{outcome.seq}/").content.decode()
    assert "<strong>8</strong>" in revert  # one click away: the preview of going back
