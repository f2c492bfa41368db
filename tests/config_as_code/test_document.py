"""The configuration file read strictly and written stably (config_as_code/document.py): pure."""

from __future__ import annotations

import pytest

from config_as_code.document import (
    KIND, MSG_KIND, ClusterConfig, DocumentError, MaskSpec, QuotaSpec, ScramSpec, TopicSpec, dump_document,
    parse_document,
)

FULL = f"""
kind: {KIND}
version: 1
cluster: prod
topics:
  orders:
    partitions: 6
    replication_factor: 3
    configs: {{retention.ms: 604800000, cleanup.policy: compact, unclean.leader.election.enable: false}}
acls:
  - {{principal: "User:billing", resource_type: TOPIC, resource_name: orders, operation: READ}}
quotas:
  - {{user: billing, values: {{producer_byte_rate: 1048576}}}}
  - {{client_id: "<default>", values: {{consumer_byte_rate: 2.5e6}}}}
scram_users:
  billing: {{mechanisms: [SCRAM-SHA-512, SCRAM-SHA-256], password_env: CONSOLE_SECRET_BILLING}}
topic_policies:
  naming: {{name_pattern: "[a-z.]+", min_partitions: 3, config_rules: ["min.insync.replicas >= 2"]}}
masking_rules:
  - {{topic_pattern: "orders.*", selector: json_path, target: "$.card", action: redact, roles: [viewer]}}
connectors:
  local:
    sink: {{connector.class: FileStreamSink, tasks.max: 1, file: /tmp/x}}
"""


def test_a_whole_file_reads_into_typed_sections():
    config = parse_document(FULL)
    assert config.cluster == "prod"
    # YAML's numbers and booleans become the text Kafka holds for a config
    assert config.topics == {"orders": TopicSpec(6, 3, {"retention.ms": "604800000", "cleanup.policy": "compact",
                                                         "unclean.leader.election.enable": "false"})}
    assert config.acls == {("User:billing", "TOPIC", "orders", "LITERAL", "READ", "ALLOW", "*")}
    assert config.quotas == {"user=billing": QuotaSpec("billing", None, {"producer_byte_rate": 1048576.0}),
                             "client_id=<default>": QuotaSpec(None, "<default>", {"consumer_byte_rate": 2.5e6})}
    assert config.scram_users == {"billing": ScramSpec(("SCRAM-SHA-256", "SCRAM-SHA-512"), "CONSOLE_SECRET_BILLING")}
    assert config.topic_policies["naming"]["min_partitions"] == 3
    assert config.topic_policies["naming"]["max_partitions"] is None
    assert config.masking_rules == (MaskSpec("orders.*", "json_path", "$.card", "redact", "", 4, ("viewer",)),)
    assert config.connectors == {"local": {"sink": {"connector.class": "FileStreamSink", "tasks.max": "1",
                                                    "file": "/tmp/x"}}}
    assert config.sections == ("topics", "acls", "quotas", "scram_users", "topic_policies", "masking_rules",
                               "connectors")


def test_a_section_left_out_is_not_managed():
    config = parse_document(f"kind: {KIND}\nversion: 1\ntopics: {{}}\n")
    assert config.topics == {} and config.acls is None and config.sections == ("topics",)


def test_written_then_read_gives_the_same_and_a_password_env_is_never_written():
    config = parse_document(FULL)
    text = dump_document(config)
    assert "CONSOLE_SECRET_BILLING" not in text and "password_env:" not in text.split("kind:")[1]
    again = parse_document(text)
    assert again.topics == config.topics and again.acls == config.acls and again.quotas == config.quotas
    assert again.masking_rules == config.masking_rules and again.connectors == config.connectors
    assert {n: u.mechanisms for n, u in again.scram_users.items()} == {"billing": ("SCRAM-SHA-256", "SCRAM-SHA-512")}
    assert dump_document(again) == text  # stable: a second export is byte for byte the first


@pytest.mark.parametrize(("text", "message"), [
    ("kind: other\nversion: 1", MSG_KIND),
    (f"kind: {KIND}\nversion: 2", "This console reads version 1 of the file format, not '2'."),
    (f"kind: {KIND}\nversion: 1\ntopicz: {{}}", "The file has keys the file format does not know: topicz"),
    (f"kind: {KIND}\nversion: 1\ntopics: {{a: {{partitions: 0}}}}", "topics.a.partitions must be a whole number of at least 1."),
    (f"kind: {KIND}\nversion: 1\ntopics: {{a: {{partitions: true}}}}", "topics.a.partitions must be a whole number"),
    (f"kind: {KIND}\nversion: 1\ntopics: {{a: {{partitions: 1, retention: 5}}}}", "topics.a has keys"),
    (f"kind: {KIND}\nversion: 1\nacls: [{{principal: 'User:a'}}]", "acls[0].resource_type is required."),
    (f"kind: {KIND}\nversion: 1\nquotas: [{{values: {{a: 1}}}}]", "quotas[0].user or quotas[0].client_id is required."),
    (f"kind: {KIND}\nversion: 1\nquotas: [{{user: a, values: {{a: .nan}}}}]", "quotas[0].values.a must be a number."),
    (f"kind: {KIND}\nversion: 1\ntopics: [a]", "topics must be a mapping"),
    ("kind: [unclosed", "The file is not YAML"),
    ("- just a list", "The file must be a mapping"),
])
def test_a_bad_file_is_refused_with_where_and_why(text, message):
    with pytest.raises(DocumentError) as refused:
        parse_document(text)
    assert message in refused.value.message


def test_yaml_tags_that_run_code_are_refused():
    with pytest.raises(DocumentError):
        parse_document(f"kind: {KIND}\nversion: 1\ntopics: !!python/object/apply:os.system ['true']")


def test_only_keeps_the_sections_named():
    config = parse_document(FULL).only(("topics",))
    assert config.sections == ("topics",) and isinstance(config, ClusterConfig)
