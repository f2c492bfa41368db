"""ACL bindings from a person's input: the broker's rules checked before anything is sent, and a binding survives
the round trip through a form value whatever its names hold."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from access.bindings import (MSG_BAD_BINDING, MSG_HOST, MSG_HOST_BITS, MSG_HOST_MAPPED, MSG_HOST_RANGE,
                             MSG_HOST_SCOPED, binding_from_token, binding_token, bindings_for, entry_line, host_checked,
                             query_for, range_refusal)
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


@pytest.mark.parametrize("typed, message, values", [
    ("broker.example.com", MSG_HOST, {}), ("10.0.0.*", MSG_HOST, {}), ("10.0.0.0/33", MSG_HOST, {}),
    ("10.0.0.0-10.0.0.9", MSG_HOST, {}), ("fe80::1%eth0", MSG_HOST_SCOPED, {}),
    ("10.0.0.1/8", MSG_HOST_BITS, {"prefix": 8, "network": "10.0.0.0/8"}),
    ("2001:db8::1/32", MSG_HOST_BITS, {"prefix": 32, "network": "2001:db8::/32"}),
    ("::ffff:10.0.0.0/104", MSG_HOST_MAPPED, {}),
])
def test_a_host_the_broker_would_never_match_is_refused_saying_why(typed, message, values):
    with pytest.raises(ConsoleError) as refused:
        bindings_for(principal="User:a", resource_type="TOPIC", resource_name="t", pattern_type="LITERAL",
                     operations=["READ"], permission="ALLOW", host=typed)
    assert str(refused.value) == message.format(host=typed.strip(), **values)
    assert refused.value.field == "host"


# A range is parsed by the broker (CIDR, KIP-1276): kept in its shortest form, which is also how it is listed.
@pytest.mark.parametrize("typed, stored", [
    ("10.0.0.0/8", "10.0.0.0/8"), (" 192.168.1.0/24 ", "192.168.1.0/24"), ("10.0.0.1/32", "10.0.0.1/32"),
    ("0.0.0.0/0", "0.0.0.0/0"), ("2001:DB8:0:0::/32", "2001:db8::/32"), ("::/0", "::/0"),
])
def test_a_range_is_kept_in_its_shortest_form(typed, stored):
    assert host_checked(typed) == stored


@pytest.mark.parametrize("level, refused", [(None, True), (30, True), (31, True), (32, False), (33, False)])
def test_a_range_needs_metadata_version_4_4_iv1(level, refused):
    message = range_refusal("10.0.0.0/8", cluster="prod", metadata_level=level)
    assert bool(message) is refused
    if level == 30:
        assert message == MSG_HOST_RANGE.format(host="10.0.0.0/8", cluster="prod", version="4.3-IV0 (level 30)")
    assert range_refusal("10.0.0.1", cluster="prod", metadata_level=level) == ""  # one address is fine anywhere


def test_a_stored_binding_keeps_its_host_as_the_broker_holds_it():
    # Written by another tool: a delete matches hosts as text, so the token keeps them as they are.
    for host in ("::1", "10.0.0.1/8", "2001:DB8::/32"):
        [entry] = bindings_for(principal="User:a", resource_type="TOPIC", resource_name="t", pattern_type="LITERAL",
                               operations=["READ"], permission="DENY")
        token = binding_token(entry.__class__(**{**entry.__dict__, "host": host}))
        assert binding_from_token(token).host == host


@given(host=st.text(max_size=60))
def test_any_typed_host_is_either_an_address_or_refused(host):
    try:
        stored = host_checked(host)
    except ConsoleError:
        return
    assert stored == "*" or host_checked(stored) == stored  # stored as written back: idempotent
