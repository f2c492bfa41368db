"""The database against the witness, on generated chains: each kind of tampering is found with exactly its seqs,
and nothing is found where nothing was done."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from console.audit.chain import GENESIS_HASH
from console.witness.compare import Finding, Kind, compare, format_ranges, seq_ranges
from console.witness.records import Link


def chain(n: int) -> list[Link]:
    links, prev = [], GENESIS_HASH
    for seq in range(1, n + 1):
        links.append(Link(seq=seq, hash=f"h{seq}", prev_hash=prev, body={"seq": seq, "reason": f"r{seq}"}))
        prev = links[-1].hash
    return links


@st.composite
def published_chain(draw, min_published: int = 1, min_events: int = 1):
    """A chain of n events of which the first p were published."""
    n = draw(st.integers(min_value=max(min_published, min_events), max_value=40))
    p = draw(st.integers(min_value=min_published, max_value=n))
    return chain(n), p


def found(db, witness, **kwargs) -> dict[Kind, list[int]]:
    return {f.kind: f.seqs for f in compare(db, witness, **kwargs).findings}


@given(published_chain(min_published=0, min_events=0))
def test_an_untouched_chain_agrees_with_its_witness(case):
    links, p = case

    result = compare(links, links[:p])

    assert result.ok and (result.events, result.witness_records, result.unpublished) == (len(links), p, len(links) - p)
    assert result.witness_last_seq == (p or None)


@given(published_chain(), st.data())
def test_removed_rows_are_missing_in_the_middle_or_at_the_tail(case, data):
    links, p = case
    removed = data.draw(st.sets(st.integers(min_value=1, max_value=p), min_size=1))
    remaining = [link for link in links if link.seq not in removed]

    newest_left = max((link.seq for link in remaining), default=0)
    tail = sorted(s for s in removed if s > newest_left)
    middle = sorted(s for s in removed if s < newest_left)
    assert found(remaining, links[:p]) == {k: v for k, v in {Kind.MISSING_TAIL: tail, Kind.MISSING_ROW: middle}.items() if v}


@given(published_chain(), st.data())
def test_changed_rows_are_named(case, data):
    links, p = case
    changed = data.draw(st.sets(st.integers(min_value=1, max_value=p), min_size=1))
    by_hash = data.draw(st.booleans())
    db = [
        (Link(link.seq, link.hash + "x", link.prev_hash, link.body) if by_hash else
         Link(link.seq, link.hash, link.prev_hash, {**link.body, "reason": "edited"}))
        if link.seq in changed else link for link in links
    ]

    assert found(db, links[:p]) == {Kind.CHANGED: sorted(changed)}


@given(published_chain(min_published=2), st.data())
def test_rows_the_witness_never_saw_are_named(case, data):
    links, p = case
    # A record missing from the witness's middle: the database row there was never published (inserted).
    unseen = data.draw(st.sets(st.integers(min_value=2, max_value=p), min_size=1).filter(lambda s: p not in s))
    witness = [link for link in links[:p] if link.seq not in unseen]

    assert found(links, witness) == {Kind.UNSEEN: sorted(unseen)}


@given(published_chain(min_published=0), st.data())
def test_an_unpublished_row_that_does_not_continue_the_chain_is_named(case, data):
    links, p = case
    last = links[-1]
    forged = data.draw(st.sampled_from([
        Link(last.seq + 1, "forged", last.hash, {}, hash_ok=False),  # a hash nobody without the key can make
        Link(last.seq + 1, "forged", "not-the-previous-hash", {}),
        Link(last.seq + 2, "forged", last.hash, {}),  # a seq skipped
    ]))

    assert found([*links, forged], links[:p]) == {Kind.UNCHAINED: [forged.seq]}


@given(published_chain(min_published=2), st.data())
def test_rows_older_than_the_witness_are_counted_not_reported(case, data):
    links, p = case
    expired = data.draw(st.integers(min_value=1, max_value=p - 1))  # the topic's retention dropped these

    result = compare(links, links[expired:p])

    assert result.ok and result.expired == expired and result.witness_first_seq == expired + 1


def test_witness_records_not_genuine_or_out_of_order_are_left_out_and_reported():
    links = chain(4)
    forged = Link(3, "h3", "h2", links[2].body, hash_ok=False)
    witness = [links[0], links[1], links[1], forged, links[2], links[3]]

    result = compare(links, witness, unreadable_offsets=[7])

    assert {f.kind: f.seqs for f in result.findings} == {Kind.WITNESS_INVALID: [2, 3], Kind.WITNESS_UNREADABLE: [7]}
    assert result.witness_records == 4


@given(st.sets(st.integers(min_value=1, max_value=500)))
def test_seq_ranges_fold_runs_and_lose_nothing(seqs):
    ranges = seq_ranges(seqs)

    assert Finding(Kind.CHANGED, tuple(ranges)).seqs == sorted(seqs)
    assert all(b + 1 < c for (_, b), (c, _) in zip(ranges, ranges[1:]))


def test_messages_name_the_seqs():
    assert format_ranges(seq_ranges([19, 20, 7])) == "#7, #19-#20"
    assert Finding(Kind.MISSING_TAIL, ((19, 20),)).message.startswith("#19-#20: published to the witness")
