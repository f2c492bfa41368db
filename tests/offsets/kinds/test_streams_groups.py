"""Streams groups (KIP-1071) made by a real Kafka Streams application (Kafka's WordCountDemo from
kafka-streams-examples 4.3.1, run with group.protocol=streams) on the real broker: listed with their type,
described as kafka-streams-groups describes them (members, tasks, subtopologies, offsets, lag), reset with its
dry run's targets, refused while the application runs, audited and reverted, in the pages and the shell."""

from __future__ import annotations

import io
import json
import re
import subprocess
import time
import uuid
from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from django.urls import reverse

from console.audit.actor import Actor
from console.audit.models import AuditEvent
from devstack.kafka import java_classpath
from console.errors import Conflict
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.types import ClusterConnection, PartitionRef
from offsets.kinds.streams import streams_group_detail
from offsets.resets.planning import ALL_TOPICS, ShiftBy, ToDatetime, ToEarliest, ToLatest, ToOffset, TopicScope
from offsets.resets.preview import reset_preview
from offsets.resets.services import group_offsets_reset, group_offsets_revert
from offsets.selectors import group_rows, group_snapshot_refresh, groups_of_every_type

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]

STREAMS_COMMAND = "org.apache.kafka.tools.streams.StreamsGroupCommand"
WORD_COUNT = "org.apache.kafka.streams.examples.wordcount.WordCountDemo"
# The demo's own topic names.
INPUT, OUTPUT = "streams-plaintext-input", "streams-wordcount-output"
LINES = 40
# Recent timestamps, one minute apart: records older than the broker's retention would be deleted as new
# segments roll, moving the log start under the tests.
BASE_MS = (int(time.time()) // 60 - 120) * 60_000
SOME_TIME = datetime.fromtimestamp((BASE_MS + 11 * 60_000 + 30_000) / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


class WordCount:
    """The demo application under one application id (the streams group's id), started and stopped at will."""

    def __init__(self, kafka_node, home):
        self.node = kafka_node
        self.group = f"wordcount-{uuid.uuid4().hex[:8]}"
        self.properties = home / "wordcount.properties"
        self.properties.write_text(
            f"application.id={self.group}\nbootstrap.servers={kafka_node.bootstrap}\ngroup.protocol=streams\n"
            f"state.dir={home / 'state'}\ncommit.interval.ms=200\n")
        self.log = home / "wordcount.log"
        self.process: subprocess.Popen | None = None
        self.admin = KafkaAdmin(ClusterConnection("fixture", kafka_node.bootstrap), timeout=10)

    def start(self) -> None:
        with open(self.log, "a") as log:
            self.process = subprocess.Popen(["java", "-Xmx256m", "-cp", java_classpath(self.node.libs), WORD_COUNT,
                                             str(self.properties)], stdout=log, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        """SIGTERM runs the demo's shutdown hook: KafkaStreams.close(), so the member leaves the group."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(60)
        self.wait_for(lambda d: not d.members, "the members to leave")

    def description(self):
        return self.admin.describe_streams_groups([self.group])[self.group]

    def wait_for(self, condition, what: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        last = None
        while True:
            try:
                if condition(self.description()):
                    return
            except KafkaGatewayError as exc:  # the group does not exist until the first member joins
                last = exc
            assert time.monotonic() < deadline, (f"timed out waiting for {what} ({last!r}); "
                                                 f"log: {self.log.read_text()[-2000:]}")
            time.sleep(0.5)

    def caught_up(self) -> bool:
        """Committed up to the log end on the input and on the repartition topic the second subtopology reads."""
        repartition = [t for s in self.description().subtopologies for t in s.repartition_source_topics]
        refs = [PartitionRef(topic, p) for topic in [INPUT, *repartition] for p in range(2)]
        committed = self.admin.streams_group_offsets([self.group]).get(self.group, {})
        ends = self.admin.list_offsets_many(refs, ["latest"])["latest"]
        return bool(repartition) and all(committed.get(ref) == end.offset for ref, end in ends.items())


@pytest.fixture(scope="module")
def word_count(kafka_node, tmp_path_factory):
    from confluent_kafka import Producer

    admin = KafkaAdmin(ClusterConnection("fixture", kafka_node.bootstrap), timeout=10)
    existing = {t.name for t in admin.list_topics()}
    for name in (INPUT, OUTPUT):
        if name not in existing:
            admin.create_topic(name, partitions=2, replication_factor=1, configs={})
    producer = Producer({"bootstrap.servers": kafka_node.bootstrap})
    for i in range(LINES):
        producer.produce(INPUT, value=f"line {i} of the words we count {i % 3}".encode(), partition=i % 2,
                         timestamp=BASE_MS + i * 60_000)
    assert producer.flush(15) == 0
    app = WordCount(kafka_node, tmp_path_factory.mktemp("wordcount"))
    app.start()
    app.wait_for(lambda d: d.state == "Stable" and d.members and d.members[0].active_tasks, "a stable group")
    deadline = time.monotonic() + 120
    while not app.caught_up():
        assert time.monotonic() < deadline, "the application never committed the input's end"
        time.sleep(0.5)
    yield app
    if app.process.poll() is None:
        app.stop()


@pytest.fixture
def stopped(word_count):
    word_count.stop()
    return word_count


def _tool(kafka_node, *args: str) -> list[dict[str, str]]:
    """The rows StreamsGroupCommand prints, by its header's column names (the last column may hold spaces)."""
    result = kafka_node.run_tool(STREAMS_COMMAND, "--bootstrap-server", kafka_node.bootstrap, *args)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    if not lines:
        return []
    header = lines[0].split()
    assert header[0] == "GROUP", result.stdout
    return [dict(zip(header, line.split(None, len(header) - 1))) for line in lines[1:]]


def _assignments(text: str) -> dict[str, tuple[tuple[str, tuple[int, ...]], ...]]:
    """'ACTIVE: 0:[0,1]; 1:[0,1]; STANDBY: ...' as {kind: ((subtopology, partitions), ...)}."""
    found = {}
    for kind, tasks in re.findall(r"([A-Z-]+): ((?:[^:;\s]+:\[[0-9,]*\]; )*)", text + " "):
        found[kind] = tuple((sub, tuple(int(p) for p in parts.split(",") if p))
                            for sub, parts in re.findall(r"([^:;\s]+):\[([0-9,]*)\]", tasks))
    return found


def test_running_application_listed_described_and_its_reset_refused(word_count, kafka_node, local_cluster,
                                                                     operator):
    group = word_count.group
    listings, problem = groups_of_every_type("local")
    assert problem == "" and {g.group_id: g.group_type for g in listings}[group] == "streams"
    row = next(r for r in group_rows("local", [g for g in listings if g.group_id == group]))
    assert row.protocol == "streams" and row.members == 1 and row.lag == 0 and INPUT in row.topics

    detail = streams_group_detail("local", group)
    description = detail.description
    assert description.state == "Stable"
    # WordCount: subtopology 0 reads the input and writes the repartition topic that subtopology 1 reads.
    sources = {s.subtopology_id: s for s in description.subtopologies}
    assert INPUT in sources["0"].source_topics and sources["1"].repartition_source_topics
    assert sources["1"].changelog_topics and sources["1"].changelog_topics[0].endswith("-changelog")
    member = description.members[0]
    assert {sub for sub, _ in member.active_tasks} == {"0", "1"}
    tool_members = _tool(kafka_node, "--describe", "--members", "--group", group)
    assert [(m["MEMBER"], m["PROCESS"], m["CLIENT-ID"]) for m in tool_members] == [
        (member.member_id, member.process_id, member.client_id)]
    assert _assignments(tool_members[0]["ASSIGNMENTS"])["ACTIVE"] == member.active_tasks
    # While it runs, the tool prints each assigned partition's lag (input and repartition topics): the same here.
    tool_lag = {(r["TOPIC"], int(r["PARTITION"])): int(r["OFFSET-LAG"])
                for r in _tool(kafka_node, "--describe", "--offsets", "--group", group)}
    assert tool_lag and {(p.ref.topic, p.ref.partition): p.lag for p in detail.partitions} == tool_lag
    by_ref = {p.ref: p for p in detail.partitions}
    assert by_ref[PartitionRef(INPUT, 0)].owners == (f"{member.client_id}@{member.host}",)

    actor = Actor(user=operator, source="web")
    with pytest.raises(Conflict, match="member"):
        group_offsets_reset(actor=actor, cluster="local", group=group, scope=ALL_TOPICS, strategy=ToEarliest(),
                            reason="while running", confirm=group)
    assert AuditEvent.objects.filter(action="streams-group.offsets.reset", outcome="refused",
                                     target=f"group:{group}").exists()


def test_a_stopped_application_keeps_its_offsets_on_the_page(stopped, kafka_node, local_cluster):
    """With no members the tool prints no offsets at all; the console still shows what the group committed."""
    assert _tool(kafka_node, "--describe", "--offsets", "--group", stopped.group) == []
    # A log end the broker did not give within the request's bound (a loaded CI host) is shown unknown, never
    # guessed; the page read again a moment later has it, as a person's refresh would.
    deadline = time.monotonic() + 30
    while True:
        detail = streams_group_detail("local", stopped.group)
        inputs = {p.ref.partition: (p.committed, p.lag) for p in detail.partitions if p.ref.topic == INPUT}
        assert all(lag in (0, None) for _, lag in inputs.values()), inputs
        if all(lag is not None for _, lag in inputs.values()) or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert detail.description.state == "Empty" and detail.description.members == ()
    assert inputs == {0: (LINES // 2, 0), 1: (LINES // 2, 0)}, (
        detail.partitions, stopped.admin.streams_group_offsets([stopped.group]), stopped.log.read_text()[-1500:])
    repartition = [p for p in detail.partitions if p.ref.topic.endswith("-repartition")]
    assert repartition and all(p.committed is not None and p.owners == () for p in repartition)


@pytest.mark.parametrize("flags, scope, strategy", [
    (["--all-input-topics", "--to-earliest"], ALL_TOPICS, ToEarliest()),
    (["--all-input-topics", "--to-latest"], ALL_TOPICS, ToLatest()),
    (["--all-input-topics", "--shift-by", "-7"], ALL_TOPICS, ShiftBy(-7)),
    (["--input-topic", f"{INPUT}:1", "--to-offset", "3"], [TopicScope(INPUT, (1,))], ToOffset(3)),
    (["--all-input-topics", "--to-datetime", SOME_TIME], ALL_TOPICS, ToDatetime(SOME_TIME)),
])
def test_dry_run_matches_kafka_streams_groups(stopped, kafka_node, local_cluster, flags, scope, strategy):
    rows = _tool(kafka_node, "--reset-offsets", "--group", stopped.group, *flags, "--dry-run")
    kafka = {(r["TOPIC"], int(r["PARTITION"])): int(r["NEW-OFFSET"]) for r in rows}
    plan = reset_preview("local", stopped.group, scope, strategy).plan
    assert {(row.ref.topic, row.ref.partition): row.target for row in plan.rows} == kafka


def test_reset_executed_audited_and_reverted(stopped, local_cluster, operator):
    group = stopped.group
    actor = Actor(user=operator, source="web")
    before = {p.ref: p.committed for p in streams_group_detail("local", group).partitions if p.ref.topic == INPUT}
    after = group_offsets_reset(actor=actor, cluster="local", group=group, scope=ALL_TOPICS, strategy=ToEarliest(),
                                reason="count again", confirm=group)
    assert after == {INPUT: {"0": 0, "1": 0}}
    now = {p.ref: p.committed for p in streams_group_detail("local", group).partitions if p.ref.topic == INPUT}
    assert now == {ref: 0 for ref in before}
    event = AuditEvent.objects.filter(action="streams-group.offsets.reset", outcome="success").last()
    assert event.target == f"group:{group}" and event.before == {INPUT: {"0": LINES // 2, "1": LINES // 2}}
    group_offsets_revert(actor=actor, cluster="local", seq=event.seq, reason="undo", confirm=group)
    assert {p.ref: p.committed for p in streams_group_detail("local", group).partitions
            if p.ref.topic == INPUT} == before


def test_pages_and_shell_show_streams_groups(stopped, client_for, viewer, operator, local_cluster):
    group = stopped.group
    group_snapshot_refresh("local", wait_s=30)
    listing = client_for(viewer).get("/clusters/local/groups/", {"type": "streams"}).content.decode()
    assert f'data-group="{group}"' in listing and "<td>streams</td>" in listing
    page = client_for(viewer).get(f"/clusters/local/groups/{group}/").content.decode()
    assert "Streams group" in page and INPUT in page and "-changelog" in page
    preview = client_for(operator).post(f"/clusters/local/groups/{group}/reset/",
                                        {"scope": "all", "strategy": "to-latest"})
    assert preview.status_code == 200 and "kafka-streams-groups" in preview.content.decode()

    out = io.StringIO()
    call_command("groups", "list", "--all-types", "--format", "json", stdout=out)
    assert {"group": group, "state": "Empty", "type": "streams"} in json.loads(out.getvalue())
    out = io.StringIO()
    call_command("groups", "describe", group, "--format", "json", stdout=out)
    rows = json.loads(out.getvalue())
    assert {(r["topic"], r["partition"]) for r in rows} >= {(INPUT, 0), (INPUT, 1)}
    out = io.StringIO()
    call_command("groups", "describe", group, "--state", "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["subtopologies"][0]["source_topics"] == [INPUT]
    out = io.StringIO()
    call_command("reset_offsets", "--group", group, "--all-topics", "--to-earliest", stdout=out)
    assert "kafka-streams-groups --reset-offsets semantics" in out.getvalue() and "nothing changed" in out.getvalue()


def test_the_lag_sampler_samples_streams_groups(stopped, client_for, viewer, local_cluster):
    from offsets.lag.sampler import lag_sample
    from offsets.models import GroupLagStatus, LagSample

    from datetime import UTC, datetime, timedelta

    group = stopped.group
    now = datetime.now(UTC)
    for minutes in (2, 1, 0):  # the status needs a window of samples
        lag_sample(cluster="local", now=now - timedelta(minutes=minutes))
    samples = LagSample.objects.filter(cluster="local", group=group, topic=INPUT, step=0)
    assert [(s.lag, s.committed, s.partitions) for s in samples] == [(0, LINES, 2)] * 3
    status = GroupLagStatus.objects.get(cluster="local", group=group)
    assert status.status == "OK", status.reason
    page = client_for(viewer).get(f"/clusters/local/groups/{group}/").content.decode()
    assert f"status-{status.status}" in page


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_an_operator_resets_and_reverts_a_streams_group_in_the_browser(stopped, logged_in_page, make_user,
                                                                        local_cluster, tmp_path):
    group = stopped.group

    def committed() -> dict[int, int]:
        offsets = stopped.admin.streams_group_offsets([group])[group]
        return {ref.partition: o for ref, o in offsets.items() if ref.topic == INPUT}

    before = committed()
    group_snapshot_refresh("local", wait_s=30)
    page = logged_in_page(make_user("streams-oncall", "operator"))
    page.goto("/clusters/local/groups/?type=streams")
    page.click(f"a:has-text('{group}')")
    assert "No members: the application is stopped." in page.locator("#streams-members").inner_text()
    assert INPUT in page.locator("#streams-subtopologies").inner_text()
    page.click("a:has-text('Reset offsets')")
    page.select_option("select[name=scope]", "all")
    page.select_option("select[name=strategy]", "to-earliest")
    page.click("button:has-text('Preview')")
    preview = page.locator("#reset-preview")
    preview.get_by_text("Execute this plan").wait_for()
    assert "kafka-streams-groups" in preview.inner_text() and "-repartition" not in preview.inner_text()
    preview.locator("input[name=reason]").fill("count the words again")
    preview.locator("input[name=confirm]").fill(group)
    page.click("button:has-text('Execute this plan')")
    page.get_by_text(f"Offsets of {group} reset.").wait_for()
    assert committed() == {0: 0, 1: 0}, [(e.target, e.outcome, e.before, e.after, e.params) for e in
                                         AuditEvent.objects.filter(action="streams-group.offsets.reset")]

    outcome = AuditEvent.objects.get(action="streams-group.offsets.reset", outcome="success",
                                     actor_name="streams-oncall")
    page.goto(f"/audit/{outcome.seq}/")
    page.click("a:has-text('Revert this reset')")
    page.fill("input[name=reason]", "undo")
    page.fill("input[name=confirm]", group)
    page.click("button:has-text('Execute the revert')")
    page.get_by_text(f"back to those before audit event #{outcome.seq}").wait_for()
    page.screenshot(path=str(tmp_path / "streams-group-after-revert.png"), full_page=True)
    assert committed() == before


@pytest.mark.django_db(transaction=True)  # pytest-django runs these last: after the browser test, which needs the group
def test_an_admin_deletes_the_stopped_group_from_its_page(stopped, client_for, admin, operator, local_cluster):
    group = stopped.group
    held = {str(ref.partition): o for ref, o in stopped.admin.streams_group_offsets([group])[group].items()
            if ref.topic == INPUT}
    refused = client_for(operator).post(f"/clusters/local/groups/{group}/delete/",
                                        {"confirm": group, "reason": "retired"})
    assert refused.status_code == 403
    wrong = client_for(admin).post(f"/clusters/local/groups/{group}/delete/", {"confirm": "other", "reason": "x"})
    assert wrong.status_code == 400 and group in {g.group_id for g in groups_of_every_type("local")[0]}
    done = client_for(admin).post(f"/clusters/local/groups/{group}/delete/", {"confirm": group, "reason": "retired"})
    assert done.status_code == 302 and done["Location"] == reverse("offsets:groups", args=["local"])
    assert group not in {g.group_id for g in groups_of_every_type("local")[0]}
    event = AuditEvent.objects.get(action="streams-group.delete", target=f"group:{group}", outcome="success")
    assert event.before[INPUT] == held and held
