"""Pure: how policy rules are written and which rules a topic breaks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topics.policies.rules import (
    CONFIGS, PARTITIONS, ConfigRule, Policy, PolicyInputError, TopicShape, check_pattern, evaluate, parse_config_rule,
    parse_config_rules, refusal_text,
)

PROD = Policy(name="prod", applies_to=r"^prod\.", name_pattern=r"prod\.[a-z]+\.[a-z0-9-]+",
              name_message="prod topics are named prod.<team>.<name>", min_partitions=3, max_partitions=64,
              partitions_message="between 3 and 64 partitions", min_replication_factor=3,
              replication_message="three copies of everything",
              config_rules=(parse_config_rule("min.insync.replicas >= 2: survive one broker"),
                            parse_config_rule("retention.ms <= 604800000: a week at most"),
                            parse_config_rule("cleanup.policy in delete | compact,delete"),
                            parse_config_rule("retention.bytes required")))


def shape(name="prod.pay.orders", partitions=6, rf=3, **configs):
    values = {"min.insync.replicas": "2", "retention.ms": "86400000", "cleanup.policy": "delete",
              "retention.bytes": "1000"}
    values.update({k.replace("_", "."): v for k, v in configs.items()})
    return TopicShape(name=name, partitions=partitions, replication_factor=rf, configs=values,
                      overrides=frozenset({"retention.bytes"}))


def test_a_topic_that_follows_every_rule_breaks_none():
    assert evaluate([PROD], shape()) == []


def test_each_broken_rule_carries_its_own_message():
    found = evaluate([PROD], shape(name="prod.Orders", partitions=1, rf=1, min_insync_replicas="1"))
    assert [v.message for v in found] == ["prod topics are named prod.<team>.<name>", "between 3 and 64 partitions",
                                          "three copies of everything", "survive one broker"]
    assert "Policy 'prod': survive one broker (min.insync.replicas is 1)" in refusal_text(found)


def test_policies_apply_only_to_the_names_they_match():
    assert evaluate([PROD], shape(name="test", partitions=1, rf=1)) == []


def test_retention_minus_one_is_unlimited_and_breaks_a_maximum():
    (violation,) = evaluate([PROD], shape(retention_ms="-1"))
    assert violation.message == "a week at most" and "no limit" in violation.detail


def test_cleanup_policy_values_are_sets():
    assert evaluate([PROD], shape(cleanup_policy="delete,compact")) == []
    (violation,) = evaluate([PROD], shape(cleanup_policy="compact"))
    assert violation.rule == "cleanup.policy in delete | compact,delete"


def test_required_means_set_on_the_topic_itself():
    found = evaluate([PROD], TopicShape(name="prod.a.b", configs={"retention.bytes": "-1"}), aspects={CONFIGS},
                     config_keys=frozenset({"retention.bytes"}))
    assert [v.detail for v in found] == ["retention.bytes is not set on the topic (broker default -1)"]


def test_a_change_is_judged_only_by_what_it_touches():
    broken = shape(partitions=1, min_insync_replicas="1")
    assert [v.rule for v in evaluate([PROD], broken, aspects=frozenset({PARTITIONS}))] == ["partitions >= 3"]
    assert evaluate([PROD], broken, aspects=frozenset({CONFIGS}), config_keys=frozenset({"retention.ms"})) == []


def test_rules_without_a_message_say_what_they_ask():
    (violation,) = evaluate([Policy(name="p", max_partitions=4)], TopicShape(name="x", partitions=5))
    assert violation.text == "Policy 'p': partitions must be at most 4 (partitions is 5)"


@pytest.mark.parametrize("line, problem", [
    ("retention.ms >= soon", "needs a number"),
    ("sasl.jaas.config required", "not a topic config"),
    ("retention.ms", "is not `KEY >= NUMBER`"),
    ("cleanup.policy in ", "is not `KEY >= NUMBER`"),
    ("retention.ms required 5", "is not `KEY >= NUMBER`"),
])
def test_bad_rules_are_refused_with_a_reason(line, problem):
    with pytest.raises(PolicyInputError, match=problem):
        parse_config_rule(line)


def test_rules_round_trip_through_their_text():
    rules = parse_config_rules("# comment\nmin.insync.replicas>=2:why\n\ncleanup.policy in delete|compact")
    assert [r.text for r in rules] == ["min.insync.replicas >= 2: why", "cleanup.policy in delete | compact"]
    assert [parse_config_rule(r.text) for r in rules] == rules
    assert ConfigRule(**rules[0].as_dict()) == rules[0]


def test_patterns_that_need_backtracking_are_refused():
    with pytest.raises(PolicyInputError, match="RE2"):
        check_pattern(r"(a)\1", "Name pattern")


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ0123456789._-", min_size=1, max_size=249))
def test_any_legal_topic_name_is_judged_without_error(name):
    policy = Policy(name="p", applies_to=r"^[a-z]", name_pattern=r"[a-z][a-z0-9.-]*", min_partitions=2)
    found = evaluate([policy], TopicShape(name=name, partitions=1))
    if name[0].islower():
        assert "partitions >= 2" in [v.rule for v in found]
        assert (not all(c.islower() or c.isdigit() or c in ".-" for c in name)) == any(
            v.rule.startswith("name matches") for v in found)
    else:
        assert found == []
