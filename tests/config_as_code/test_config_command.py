"""`manage.py config export|plan|apply` on the session broker: an export planned against the same cluster shows no
change, an edited file plans exactly its edits, apply makes the cluster equal to the file (read back with Kafka's
own kafka-topics, kafka-configs and kafka-acls), as one audited change set; a plan that went stale is refused with
nothing changed; the same through the API."""

from __future__ import annotations

import io
import json
import uuid

import pytest
import yaml
from django.core.management import CommandError, call_command

from config_as_code.document import KIND
from config_as_code.models import AppliedConfig
from console.accounts.roles import Role
from console.audit.models import AuditEvent
from tests.api.conftest import api_as, token_for  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.kafka, pytest.mark.parity, pytest.mark.django_db]

TOPICS = "org.apache.kafka.tools.TopicCommand"
CONFIGS = "kafka.admin.ConfigCommand"
ACLS = "org.apache.kafka.tools.AclCommand"


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("config", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def plan(path, *extra: str) -> dict:
    return json.loads(run("plan", str(path), "--format", "json", *extra))


def tool(node, main_class: str, *args: str) -> str:
    result = node.run_tool(main_class, "--bootstrap-server", node.bootstrap, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture
def shaped(local_cluster, topic_factory, admin):
    """A few things of each kind on the cluster, under names of this test's own."""
    tag = uuid.uuid4().hex[:6]
    keep = topic_factory(f"cac-keep-{tag}", partitions=2, configs={"retention.ms": "3600000"})
    gone = topic_factory(f"cac-gone-{tag}")
    principal = f"User:cac-{tag}"
    call_command("acls", "add", "--principal", principal, "--resource-type", "TOPIC", "--resource-name", keep,
                 "--operation", "READ", "--operation", "DESCRIBE", "--confirm", "--actor", admin.username,
                 "--reason", "setup", stdout=io.StringIO())
    return {"tag": tag, "keep": keep, "gone": gone, "principal": principal, "user": f"cac-{tag}"}


def test_export_plan_edit_apply_and_kafkas_tools_agree(shaped, kafka_node, tmp_path, admin, monkeypatch):
    path = tmp_path / "cluster.yaml"
    exported = run("export")
    path.write_text(exported)
    unchanged = plan(path, "--delete")
    assert unchanged["changes"] == [] and unchanged["problems"] == []
    assert "No change: the cluster matches the file." in run("plan", str(path))

    doc = yaml.safe_load(exported)
    keep, gone, principal, user, tag = (shaped[k] for k in ("keep", "gone", "principal", "user", "tag"))
    new = f"cac-new-{tag}"
    doc["topics"][keep] = {"partitions": 3, "replication_factor": 1,
                           "configs": {"retention.ms": "7200000", "cleanup.policy": "compact"}}
    doc["topics"][new] = {"partitions": 2, "replication_factor": 1, "configs": {"max.message.bytes": "65536"}}
    del doc["topics"][gone]
    doc["acls"] = [a for a in doc["acls"] if not (a["principal"] == principal and a["operation"] == "DESCRIBE")]
    doc["acls"].append({"principal": principal, "resource_type": "GROUP", "resource_name": f"cac-{tag}-",
                        "pattern_type": "PREFIXED", "operation": "READ", "permission": "ALLOW", "host": "*"})
    doc["quotas"].append({"user": user, "values": {"producer_byte_rate": 1048576.0}})
    doc["scram_users"][user] = {"mechanisms": ["SCRAM-SHA-256"], "password_env": f"CONSOLE_SECRET_CAC_{tag.upper()}"}
    doc["topic_policies"][f"cac-{tag}"] = {"applies_to": f"^cac-nothing-{tag}", "min_partitions": 1}
    monkeypatch.setenv(f"CONSOLE_SECRET_CAC_{tag.upper()}", "s3cret-pass-" + tag)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))

    kept = plan(path)  # without --delete: the deletes are shown, kept
    assert {(c["section"], c["action"], c["key"], c["skipped"]) for c in kept["changes"]} == {
        ("topics", "change", keep, False), ("topics", "create", new, False), ("topics", "delete", gone, True),
        ("acls", "create", f"{principal} ALLOW READ on GROUP:cac-{tag}- (PREFIXED, host *)", False),
        ("acls", "delete", f"{principal} ALLOW DESCRIBE on TOPIC:{keep} (LITERAL, host *)", True),
        ("quotas", "create", f"user={user}", False), ("scram_users", "create", user, False),
        ("topic_policies", "create", f"cac-{tag}", False)}
    edits = plan(path, "--delete")
    assert edits["counts"] == {"create": 5, "change": 1, "delete": 2, "skipped": 0} and edits["problems"] == []
    assert edits["fingerprint"] != kept["fingerprint"]

    out = io.StringIO()
    call_command("config", "apply", str(path), "--delete", "--if-unchanged", edits["fingerprint"], "--actor",
                 admin.username, "--reason", "config as code test", "--format", "json", stdout=out)
    applied = json.loads(out.getvalue())
    assert applied["applied"] == 8 and applied["fingerprint"] == edits["fingerprint"]

    # The cluster now equals the file: nothing left to plan, and Kafka's own tools read it so
    assert plan(path, "--delete")["changes"] == []
    described = tool(kafka_node, TOPICS, "--describe", "--topic", keep)
    assert "PartitionCount: 3" in described and "retention.ms=7200000" in described
    assert "cleanup.policy=compact" in described
    assert "PartitionCount: 2" in tool(kafka_node, TOPICS, "--describe", "--topic", new)
    assert gone not in tool(kafka_node, TOPICS, "--list")
    configs = tool(kafka_node, CONFIGS, "--describe", "--entity-type", "topics", "--entity-name", new)
    assert "max.message.bytes=65536" in configs
    acls = tool(kafka_node, ACLS, "--list", "--principal", principal)
    assert f"name=cac-{tag}-, patternType=PREFIXED" in acls and "operation=READ" in acls
    assert "operation=DESCRIBE" not in acls
    quotas = tool(kafka_node, CONFIGS, "--describe", "--entity-type", "users", "--entity-name", user)
    assert "producer_byte_rate=1048576.0" in quotas
    scram = tool(kafka_node, CONFIGS, "--describe", "--entity-type", "users", "--entity-name", user)
    assert "SCRAM-SHA-256" in scram

    # One change set: every row of the apply names the apply's correlation id
    apply_row = AuditEvent.objects.get(action="config.apply", outcome="success")
    change_set = str(apply_row.correlation_id)
    rows = AuditEvent.objects.filter(seq__gt=AuditEvent.objects.get(action="config.apply", outcome="intent").seq,
                                     seq__lt=apply_row.seq)
    assert rows.count() >= 8 and {r.params.get("change_set") for r in rows} == {change_set}
    assert {r.action for r in rows if r.outcome == "success"} >= {
        "topic.create", "topic.partitions.add", "topic.config.alter", "topic.delete", "acl.create", "acl.delete",
        "quota.alter", "user.credential.set", "topic.policy.create"}
    assert "s3cret-pass" not in json.dumps([r.params for r in rows] + [r.after for r in rows])
    assert AppliedConfig.objects.get().plan_fingerprint == edits["fingerprint"]


def test_a_plan_gone_stale_is_refused_and_nothing_changes(shaped, tmp_path, admin, topic_factory):
    path = tmp_path / "cluster.yaml"
    doc = {"kind": KIND, "version": 1, "topics": yaml.safe_load(run("export"))["topics"]}
    doc["topics"][shaped["keep"]]["configs"]["retention.ms"] = "100000"
    path.write_text(yaml.safe_dump(doc))
    first = plan(path)
    assert [(c["action"], c["key"]) for c in first["changes"]] == [("change", shaped["keep"])]
    topic_factory("cac-meanwhile")  # the cluster moves after the plan
    with pytest.raises(CommandError, match="changed since the plan"):
        call_command("config", "apply", str(path), "--if-unchanged", first["fingerprint"], "--actor",
                     admin.username, "--reason", "stale", stdout=io.StringIO())
    refused = AuditEvent.objects.get(action="config.apply")
    assert refused.outcome == "refused" and refused.params["fingerprint"] != first["fingerprint"]
    assert not AppliedConfig.objects.exists()
    after = yaml.safe_load(run("export"))["topics"][shaped["keep"]]["configs"]
    assert after == {"retention.ms": "3600000"}


def test_the_same_through_the_api_and_the_drift_page(shaped, api_as, admin, client_for, topic_factory):
    api = api_as(admin, role=Role.ADMIN, name="ci")
    exported = api.get("/clusters/local/config")
    assert exported.status_code == 200 and exported["Content-Type"].startswith("application/yaml")
    doc = yaml.safe_load(exported.content)
    file = yaml.safe_dump({"kind": KIND, "version": 1, "cluster": "local", "topics": {
        **doc["topics"], shaped["keep"]: {"partitions": 2, "configs": {"retention.ms": "60000"}}}})
    planned = api.post("/clusters/local/config/plan", {"file": file}).json()
    assert [(c["action"], c["key"]) for c in planned["changes"]] == [("change", shaped["keep"])]
    refused = api.post("/clusters/local/config/apply", {"file": file, "fingerprint": "0" * 16, "reason": "ci"})
    assert refused.status_code == 409 and "changed since the plan" in refused.json()["detail"]
    done = api.post("/clusters/local/config/apply", {"file": file, "fingerprint": planned["fingerprint"],
                                                      "reason": "merge of #12"}).json()
    assert done["applied"] == 1
    assert {r.params["token"]["name"] for r in AuditEvent.objects.filter(source="api", outcome="success")} == {"ci"}

    page = client_for(admin).get("/clusters/local/config/").content.decode()
    assert "No drift" in page
    topic_factory("cac-drifted")  # made by another client: the file does not have it
    page = client_for(admin).get("/clusters/local/config/").content.decode()
    assert "cac-drifted" in page and "delete" in page
    bad = api.post("/clusters/local/config/plan", {"file": "kind: nope\nversion: 1"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "file"
