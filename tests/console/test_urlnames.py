"""Any string Kafka accepts as a name survives reverse() and resolve(): property-based over the converter and
the real URL configuration (what a server's percent-decoding does in between is replayed with unquote)."""

from __future__ import annotations

from urllib.parse import unquote

from django.urls import resolve, reverse
from hypothesis import example, given, settings
from hypothesis import strategies as st

from console.urlnames import escape_name, unescape_name

# Any Unicode but lone surrogates (which no URL can carry), with the awkward characters drawn often.
names = st.text(st.one_of(st.characters(blacklist_categories=("Cs",)), st.sampled_from("/~%#?& .'\"<>\\\n")),
                max_size=300)
HOSTILE = ["team/eu west", "a/b/c", "50%", "#1", "?x=1", "<script>alert(1)</script>", "\"quoted\"", "it's",
           "~2F", "~", "", ".", "..", "../..", "ünïcødé-群组", "x" * 300, "trailing/", "/leading", "~7E/~2F"]


@given(names)
@example("")
@example(".")
@example("..")
def test_escaping_round_trips_and_never_leaves_a_slash_or_a_dot_segment(name):
    escaped = escape_name(name)

    assert unescape_name(escaped) == name
    assert "/" not in escaped and escaped not in ("", ".", "..")


@settings(max_examples=300)
@given(names)
def test_group_urls_resolve_back_to_the_same_group(name):
    for url_name, extra in (("offsets:detail", []), ("offsets:reset", []), ("offsets:revert", [7])):
        url = reverse(url_name, args=["local", name, *extra])
        match = resolve(unquote(url))  # what the server hands Django: the path with %XX decoded

        assert match.kwargs["group"] == name and match.url_name == url_name.split(":")[1]


def test_hostile_group_and_topic_names_resolve():
    for name in HOSTILE:
        for url_name, key in (("offsets:detail", "group"), ("offsets:reset-export", "group"),
                              ("topics:detail", "topic"), ("topics:messages", "topic")):
            url = reverse(url_name, args=["local", name])
            assert resolve(unquote(url)).kwargs[key] == name, (name, url)
