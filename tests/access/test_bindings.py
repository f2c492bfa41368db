"""ACL bindings from a person's input: the broker's rules checked before anything is sent, and a binding survives
the round trip through a form value whatever its names hold."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from access.bindings import (MSG_BAD_BINDING, MSG_HOST, MSG_HOST_RANGE, MSG_HOST_SCOPED, binding_from_token,
                             binding_token, bindings_for, entry_line, host_checked, query_for)
from console.errors import ConsoleError
from gateway.kafka.types import AclQuery


def test_one_binding_per_operation():
    found = bindings_for(principal="User:alice", resource_type="topic", resource_name="orders",
                         pattern_type="prefixed", operations=["read", "DESCRIBE", "READ"], permission="allow")
    assert [(e.operation, e.pattern_type, e.permission, e.host) for e in found] == [
        ("DESCRIBE", "PREFIXED", "ALLOW", "*"), ("READ", "PREFIXED", "ALLOW", "*")]
    assert entry_line(found[0]) == ("(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW) on "
                                    "ResourcePattern(resourceType=TOPIC, name=orders, patternType=PREFIXED)")


@pytest.mark.parametrize(("fields", "message"), [
    ({"principal": "alice"}, "Type:name"),
    ({"principal": ":alice"}, "Type:name"),
    ({"principal": "User:"}, "Type:name"),
    ({"resource_name": ""}, "Name the topic"),
    ({"resource_name": "*", "pattern_type": "PREFIXED"}, "cannot be \\*"),
    ({"operations": []}, "at least one operation"),
    ({"operations": ["IDEMPOTENT_WRITE"]}, "not an operation on a TOPIC"),
    ({"operations": ["FLY"]}, "Unknown operation"),
    ({"resource_type": "CLUSTER", "resource_name": "prod"}, "kafka-cluster"),
    ({"permission": "MAYBE"}, "Unknown permission"),
])
def test_refusals_name_the_problem(fields, message):
    request = {"principal": "User:alice", "resource_type": "TOPIC", "resource_name": "orders",
               "pattern_type": "LITERAL", "operations": ["READ"], "permission": "ALLOW", **fields}
    with pytest.raises(ConsoleError, match=message):
        bindings_for(**request)


def test_cluster_resource_is_named_for_the_caller():
    [entry] = bindings_for(principal="User:ops", resource_type="CLUSTER", resource_name="", pattern_type="LITERAL",
                           operations=["IDEMPOTENT_WRITE"], permission="ALLOW")
    assert entry.resource_name == "kafka-cluster"


def test_a_name_alone_matches_every_binding_that_applies_to_it():
    assert query_for(resource_type="TOPIC", resource_name="orders") == AclQuery(
        resource_type="TOPIC", resource_name="orders", pattern_type="MATCH")
    assert query_for() == AclQuery()
    assert query_for(pattern_type="ANY", principal="User:a").pattern_type is None




@given(principal_name=st.text(min_size=1, max_size=255), resource=st.text(min_size=1, max_size=255),
       host=st.sampled_from(["*", "10.0.0.1", "::1"]))
def test_a_binding_survives_the_form_round_trip(principal_name, resource, host):
    pattern = "LITERAL" if resource == "*" else "PREFIXED"
    [entry] = bindings_for(principal="User:" + principal_name, resource_type="GROUP", resource_name=resource,
                           pattern_type=pattern, operations=["READ"], permission="DENY", host=host)
    assert binding_from_token(binding_token(entry)) == entry


SHORT = "not enough values to unpack (expected 7, got {})"


@pytest.mark.parametrize("token, message", [
    ("", MSG_BAD_BINDING.format(detail="Expecting value")),
    ("[]", MSG_BAD_BINDING.format(detail=SHORT.format(0))),
    ("{}", MSG_BAD_BINDING.format(detail=SHORT.format(0))),
    ("[1,2,3,4,5,6,7]", MSG_BAD_BINDING.format(detail="every field is text")),
    ('["User:a","TOPIC","LITERAL","t","READ"]', MSG_BAD_BINDING.format(detail=SHORT.format(5))),
    ('["User:a","TOPIC","LITERAL","t","EAT","ALLOW","*"]', "Unknown operation 'EAT'; one of: ALL, READ, WRITE"),
])
def test_a_forged_token_is_refused(token, message):
    with pytest.raises(ConsoleError) as refused:
        binding_from_token(token)
    assert type(refused.value) is ConsoleError and refused.value.message.startswith(message), refused.value.message


# Java's InetAddress.getHostAddress, read with jshell on the JDK beside Kafka 4.3.1: what the authorizer compares.
@pytest.mark.parametrize("typed, stored", [
    ("", "*"), (" * ", "*"), ("10.0.0.1", "10.0.0.1"), ("::1", "0:0:0:0:0:0:0:1"),
    ("2001:db8::ff00:42:8329", "2001:db8:0:0:0:ff00:42:8329"), ("::ffff:10.0.0.1", "10.0.0.1"),
    ("2001:DB8::1", "2001:db8:0:0:0:0:0:1"),
])
def test_a_host_is_stored_as_the_broker_compares_it(typed, stored):
    assert host_checked(typed) == stored


@pytest.mark.parametrize("typed, message", [
    ("10.0.0.0/8", MSG_HOST_RANGE), ("2001:db8::/32", MSG_HOST_RANGE), ("10.0.0.1/32", MSG_HOST_RANGE),
    ("broker.example.com", MSG_HOST), ("10.0.0.*", MSG_HOST), ("fe80::1%eth0", MSG_HOST_SCOPED),
])
def test_a_host_the_broker_would_never_match_is_refused_saying_why(typed, message):
    with pytest.raises(ConsoleError) as refused:
        bindings_for(principal="User:a", resource_type="TOPIC", resource_name="t", pattern_type="LITERAL",
                     operations=["READ"], permission="ALLOW", host=typed)
    assert str(refused.value) == message.format(host=typed.strip())


@given(host=st.text(max_size=60))
def test_any_typed_host_is_either_an_address_or_refused(host):
    try:
        stored = host_checked(host)
    except ConsoleError:
        return
    assert stored == "*" or host_checked(stored) == stored  # stored as written back: idempotent
