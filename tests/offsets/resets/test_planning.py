"""Offset-reset planning against Kafka's `--reset-offsets --dry-run` semantics (reference §1): no broker, no DB."""

import pytest

from gateway.kafka.types import OffsetAt, PartitionRef
from offsets.resets.planning import (
    ALL_TOPICS,
    BAD_FILE_LINE,
    INVALID_DURATION,
    INVALID_PARTITION,
    INVALID_TOPIC_ARG,
    MILLISECONDS_REQUIRED,
    NO_COMMIT_TO_SHIFT,
    NO_LOG_OFFSETS,
    NO_RESET_PLAN,
    NO_T_IN_DATETIME,
    NO_TIMESTAMP_OFFSET,
    NONEXISTENT_PARTITIONS,
    NOTE_CLAMPED_HIGH,
    NOTE_CLAMPED_LOW,
    NOTE_COMMIT_OUT_OF_RANGE,
    NOTE_EMPTY_PARTITION,
    NOTE_NO_COMMIT,
    TIMESTAMP_OUT_OF_RANGE,
    UNKNOWN_TOPIC,
    UNPARSEABLE_DATE,
    ZONE_MINUTES_DROPPED,
    ByDuration,
    FromFile,
    FromGroup,
    PlanError,
    PlanRow,
    ShiftBy,
    ToCurrent,
    ToDatetime,
    ToEarliest,
    ToLatest,
    ToOffset,
    ToRecorded,
    TopicScope,
    describe_strategy,
    parse_kafka_datetime,
    parse_kafka_duration,
    parse_reset_file,
    parse_topic_scope,
    plan_reset,
    reset_partitions,
    resolve_partitions,
    what_timestamps_needed,
)

GROUP = "billing"
NOW = 1_700_000_000_000
P0, P1 = PartitionRef("orders", 0), PartitionRef("orders", 1)
# P0 lost its first 100 records to retention; P1 still has all of its 50.
LOG_START = {P0: 100, P1: 0}
LOG_END = {P0: 500, P1: 50}


def plan(strategy, *, partitions=(P0, P1), committed=None, by_timestamp=None, log_start=None, log_end=None):
    return plan_reset(group=GROUP, partitions=list(partitions), strategy=strategy, committed=committed or {},
                      log_start=log_start or LOG_START, log_end=log_end or LOG_END, by_timestamp=by_timestamp,
                      now_ms=NOW)


def targets(reset_plan):
    return {str(ref): offset for ref, offset in reset_plan.targets.items()}


# ---- scope -----------------------------------------------------------------------------------------------------


def test_topic_arg_without_partitions_means_all_of_them():
    assert parse_topic_scope("orders") == TopicScope("orders", None)


def test_topic_arg_with_partitions_and_a_trailing_comma_java_split_drops():
    assert parse_topic_scope("orders:0,1,2") == TopicScope("orders", (0, 1, 2))
    assert parse_topic_scope("orders:3,") == TopicScope("orders", (3,))


@pytest.mark.parametrize("arg", ["orders:0:1", "orders:", ":"])
def test_topic_arg_needs_exactly_a_topic_and_partitions(arg):
    with pytest.raises(PlanError) as error:
        parse_topic_scope(arg)
    assert error.value.message == INVALID_TOPIC_ARG.format(arg=arg)
    assert error.value.message == f"Invalid topic arg '{arg}', expected topic name and partitions"


@pytest.mark.parametrize(("arg", "bad"), [("orders:a", "a"), ("orders:0,,1", ""), ("orders: 1", " 1"),
                                          ("orders:2147483648", "2147483648")])
def test_partition_must_be_a_java_int_and_the_message_keeps_kafkas_doubled_quote(arg, bad):
    with pytest.raises(PlanError) as error:
        parse_topic_scope(arg)
    assert str(error.value) == f"Invalid partition '{bad}' specified in topic arg '{arg}''"
    assert str(error.value) == INVALID_PARTITION.format(partition=bad, arg=arg)


def test_all_topics_is_exactly_the_committed_partitions():
    committed = {PartitionRef("payments", 2): 7, P1: 3}
    resolved = resolve_partitions(ALL_TOPICS, committed=committed, partition_counts={"orders": 2, "payments": 4})
    assert resolved == [P1, PartitionRef("payments", 2)]


def test_topic_scope_expands_to_every_partition_and_merges_repeats():
    counts = {"orders": 2, "payments": 3}
    scopes = [parse_topic_scope("payments"), parse_topic_scope("orders:1"), parse_topic_scope("payments:0")]
    resolved = resolve_partitions(scopes, committed={}, partition_counts=counts)
    assert resolved == [P1, *(PartitionRef("payments", p) for p in range(3))]
    assert resolve_partitions(TopicScope("orders"), committed={}, partition_counts=counts) == [P0, P1]


def test_unknown_topic_is_named():
    with pytest.raises(PlanError, match="'ghost'") as error:
        resolve_partitions([TopicScope("orders"), TopicScope("ghost", (0,))], committed={},
                           partition_counts={"orders": 2})
    assert error.value.message == UNKNOWN_TOPIC.format(topic="ghost")


def test_nonexistent_partitions_of_a_known_topic_are_named_like_kafka_trunk():
    with pytest.raises(PlanError) as error:
        resolve_partitions(parse_topic_scope("orders:1,3,-1,2"), committed={}, partition_counts={"orders": 2})
    assert error.value.message == NONEXISTENT_PARTITIONS.format(partitions="orders--1,orders-2,orders-3")


# ---- clamped strategies ------------------------------------------------------------------------------------------


def test_to_offset_is_clamped_down_to_log_end_and_up_to_log_start():
    high = plan(ToOffset(600))
    assert targets(high) == {"orders-0": 500, "orders-1": 50}
    assert all(row.clamped for row in high.rows)
    assert high.rows[0].note == NOTE_CLAMPED_HIGH.format(requested=600, ref=P0, end=500)
    assert high.rows[0].note == ("New offset (600) is higher than latest offset for topic partition orders-0. "
                                 "Value will be set to 500")

    low = plan(ToOffset(20))
    assert targets(low) == {"orders-0": 100, "orders-1": 20}
    assert [row.clamped for row in low.rows] == [True, False]
    assert low.rows[0].note == NOTE_CLAMPED_LOW.format(requested=20, ref=P0, start=100)
    assert low.rows[1].note == ""


def test_shift_by_moves_from_the_committed_offset_and_is_clamped():
    forward = plan(ShiftBy(30), committed={P0: 200, P1: 40})
    assert targets(forward) == {"orders-0": 230, "orders-1": 50}
    assert [row.delta for row in forward.rows] == [30, 10]


def test_shift_by_negative_past_log_start_stops_at_log_start():
    back = plan(ShiftBy(-150), committed={P0: 200, P1: 40})
    assert targets(back) == {"orders-0": 100, "orders-1": 0}
    assert back.rows[0].note == NOTE_CLAMPED_LOW.format(requested=50, ref=P0, start=100)


def test_shift_by_fails_the_whole_plan_when_a_partition_has_no_commit():
    with pytest.raises(PlanError) as error:
        plan(ShiftBy(1), committed={P0: 200})
    assert error.value.message == NO_COMMIT_TO_SHIFT.format(ref=P1)
    assert str(error.value) == "Cannot shift offset for partition orders-1 since there is no current committed offset"


# ---- unclamped strategies ----------------------------------------------------------------------------------------


def test_to_earliest_and_to_latest_take_the_log_bounds():
    assert targets(plan(ToEarliest())) == {"orders-0": 100, "orders-1": 0}
    assert targets(plan(ToLatest())) == {"orders-0": 500, "orders-1": 50}
    assert not any(row.clamped for row in plan(ToLatest()).rows)


def test_to_current_keeps_the_commit_and_falls_back_to_log_end_without_one():
    reset = plan(ToCurrent(), committed={P0: 321})
    assert targets(reset) == {"orders-0": 321, "orders-1": 50}
    assert (reset.rows[0].note, reset.rows[1].note) == ("", NOTE_NO_COMMIT)
    assert reset.rows[0].delta == 0 and reset.rows[1].delta is None


def test_to_current_below_log_start_is_not_clamped():
    reset = plan(ToCurrent(), committed={P0: 7}, partitions=[P0])
    row = reset.rows[0]
    assert (row.target, row.clamped) == (7, False)
    assert row.note == NOTE_COMMIT_OUT_OF_RANGE.format(start=100, end=500)


def test_to_datetime_takes_the_offset_for_the_timestamp_and_falls_back_to_log_end_on_minus_one():
    reset = plan(ToDatetime("2020-11-10T16:51:38.198"), by_timestamp={P0: OffsetAt(250, 1605027098200), P1: -1})
    assert reset.timestamp == 1605027098198
    assert targets(reset) == {"orders-0": 250, "orders-1": 50}
    assert reset.rows[1].note == NOTE_EMPTY_PARTITION.format(partition=1, topic="orders")
    assert reset.rows[1].note == "Partition 1 from topic orders is empty. Falling back to latest known offset."


def test_to_datetime_on_an_empty_partition_lands_on_its_log_end():
    empty = {P0: 900}
    reset = plan(ToDatetime("2024-01-01T00:00:00.000Z"), partitions=[P0], log_start=empty, log_end=empty,
                 by_timestamp={P0: -1})
    assert (reset.rows[0].target, reset.rows[0].clamped) == (900, False)
    assert "is empty" in reset.rows[0].note


def test_a_timestamp_plan_without_the_lookup_names_the_partition():
    with pytest.raises(PlanError) as error:
        plan(ByDuration("PT1H"), by_timestamp={P0: 3})
    assert error.value.message == NO_TIMESTAMP_OFFSET.format(ref=P1)


def test_by_duration_looks_back_from_the_given_now():
    assert what_timestamps_needed(ByDuration("PT1M"), NOW) == NOW - 60_000
    reset = plan(ByDuration("P1D"), by_timestamp={P0: 120, P1: 5})
    assert reset.timestamp == NOW - 86_400_000
    assert targets(reset) == {"orders-0": 120, "orders-1": 5}


def test_only_timestamp_strategies_need_a_lookup():
    assert what_timestamps_needed(ToDatetime("2020-11-10T16:51:38.198Z"), NOW) == 1605027098198
    for strategy in (ToEarliest(), ToLatest(), ToCurrent(), ToOffset(1), ShiftBy(1), FromFile("t,0,1")):
        assert what_timestamps_needed(strategy, NOW) is None


def test_a_timestamp_before_1970_is_refused_because_negative_ones_mean_latest_or_earliest():
    with pytest.raises(PlanError) as error:
        what_timestamps_needed(ToDatetime("1969-12-31T23:59:59.999Z"), NOW)
    assert error.value.message == TIMESTAMP_OUT_OF_RANGE.format(timestamp=-1)


def test_missing_log_offsets_are_named():
    with pytest.raises(PlanError) as error:
        plan(ToLatest(), log_end={P0: 500})
    assert error.value.message == NO_LOG_OFFSETS.format(partitions="orders-1")


# ---- dates -------------------------------------------------------------------------------------------------------

# Expected values: the same patterns run through java.text.SimpleDateFormat, as Kafka's Utils.getDateTime does.
@pytest.mark.parametrize(("text", "epoch_ms"), [
    ("2020-11-10T16:51:38.198", 1605027098198),  # no zone: UTC, not local time
    ("2020-11-10T16:51:38.198Z", 1605027098198),
    ("2020-11-10T16:51:38.198+08", 1604998298198),
    ("2020-11-10T16:51:38.198+0800", 1604998298198),
    ("2020-11-10T16:51:38.198+08:00", 1604998298198),
    ("2020-11-10T16:51:38.198-05:00", 1605045098198),
    ("2020-11-10T16:51:38.198+05:30", 1605007298198),
    ("2020-1-5T1:2:3.004", 1578186123004),
])
def test_kafka_datetime_forms(text, epoch_ms):
    assert parse_kafka_datetime(text) == epoch_ms


@pytest.mark.parametrize("text", ["2020-11-10", "2020-11-10T", "2020-11-10t16:51:38.198"])
def test_datetime_without_a_t_gets_kafkas_message(text):
    with pytest.raises(PlanError) as error:
        parse_kafka_datetime(text)
    assert error.value.message == NO_T_IN_DATETIME


@pytest.mark.parametrize("text", ["2020-11-10T16:51:38", "2020-11-10T16:51:38Z", "2020-11-10T16:51:38.5"])
def test_datetime_needs_three_digit_milliseconds(text):
    # Kafka fails without them, and reads ".5" as 5 ms: the console refuses both.
    with pytest.raises(PlanError) as error:
        parse_kafka_datetime(text)
    assert error.value.message == MILLISECONDS_REQUIRED.format(text=text)


def test_an_hhmm_zone_with_minutes_is_refused_because_kafka_would_drop_them():
    with pytest.raises(PlanError) as error:
        parse_kafka_datetime("2020-11-10T16:51:38.198+0530")
    assert error.value.message == ZONE_MINUTES_DROPPED.format(text="2020-11-10T16:51:38.198+0530", zone="+0530",
                                                              fixed="+05:30")


@pytest.mark.parametrize("text", ["2020-02-30T00:00:00.000", "2020-11-10T24:00:00.000", "2020-11-10T16:51:38.198Zjunk",
                                  "2020-11-10T16:51:38.198+24", "2020-11-10T16:51:38.198z", "T16:51:38.198"])
def test_impossible_or_garbled_datetimes_are_refused(text):
    with pytest.raises(PlanError) as error:
        parse_kafka_datetime(text)
    assert error.value.message == UNPARSEABLE_DATE.format(text=text)


# ---- durations ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "ms"), [
    ("PT1M", 60_000), ("P1DT2H", 93_600_000), ("PT0.1S", 100), ("-PT1H", -3_600_000), ("pt1m", 60_000),
    ("PT0,5S", 500), ("PT1H-30M", 1_800_000), ("-PT-1H", 3_600_000), ("PT-0.5S", -500), ("P2D", 172_800_000),
    ("PT1.S", 1_000), ("PT0.0001S", 1),  # sub-millisecond rounds up, as Instant.minus(...).toEpochMilli() does
])
def test_java_duration_forms(text, ms):
    assert parse_kafka_duration(text) == ms


@pytest.mark.parametrize("text", ["P1W", "P1Y", "P1M", "PT", "P", "P1DT", "1H", "PT1S2M", "PT.5S", "PT0.1234567891S",
                                  "", "PT9223372036854775808S", "P106751991167301D"])
def test_invalid_durations_are_refused(text):
    with pytest.raises(PlanError) as error:
        parse_kafka_duration(text)
    assert error.value.message == INVALID_DURATION.format(text=text)


# ---- from file, from another group, to recorded -------------------------------------------------------------------


def test_from_file_three_columns_takes_partitions_from_the_file_not_the_scope():
    csv_text = "orders,1,7\npayments,0,3\n\n"  # what `--export` prints: println adds the blank line
    assert parse_reset_file(csv_text, group=GROUP) == {P1: 7, PartitionRef("payments", 0): 3}
    pay = PartitionRef("payments", 0)
    reset = plan(FromFile(csv_text), partitions=[P0], log_start={P1: 0, pay: 5}, log_end={P1: 50, pay: 9})
    assert targets(reset) == {"orders-1": 7, "payments-0": 5}
    assert reset.rows[1].clamped


def test_from_file_four_columns_keeps_only_this_groups_lines():
    csv_text = "billing,orders,0,150\nother,orders,1,9\r\nbilling,orders,1,900\n"
    assert parse_reset_file(csv_text, group=GROUP) == {P0: 150, P1: 900}
    assert targets(plan(FromFile(csv_text))) == {"orders-0": 150, "orders-1": 50}


def test_from_file_without_lines_for_the_group_has_kafkas_message():
    with pytest.raises(PlanError) as error:
        parse_reset_file("other,orders,0,1\n", group=GROUP)
    assert error.value.message == NO_RESET_PLAN.format(group=GROUP) == "No reset plan for group billing found"


@pytest.mark.parametrize(("csv_text", "line", "expected"), [
    ("orders,0,1\n\norders,x,2\n", 3, "topic,partition,offset"),
    ("orders,0,1\nbilling,orders,1,2\n", 2, "topic,partition,offset"),  # the first line decides the format
    ("billing,orders,0,1\norders,1,2\n", 2, "group,topic,partition,offset"),
    ("billing,orders,-1,5\n", 1, "group,topic,partition,offset"),
])
def test_from_file_names_the_bad_line(csv_text, line, expected):
    with pytest.raises(PlanError) as error:
        parse_reset_file(csv_text, group=GROUP)
    text = csv_text.split("\n")[line - 1]
    assert error.value.message == BAD_FILE_LINE.format(line=line, expected=expected, text=text)


def test_from_group_copies_the_other_groups_offsets_for_partitions_in_scope_and_clamps_them():
    other = FromGroup({P0: 40, PartitionRef("payments", 0): 1}, source_group="audit")
    assert reset_partitions(other, group=GROUP, scope_partitions=[P0, P1]) == [P0]
    reset = plan(other)
    assert targets(reset) == {"orders-0": 100}
    assert reset.rows[0].clamped
    assert describe_strategy(other) == "from group audit"


def test_to_recorded_reverts_to_the_before_offsets_within_the_log():
    before = ToRecorded({P0: 120, P1: 70})
    reset = plan(before, committed={P0: 400, P1: 10})
    assert targets(reset) == {"orders-0": 120, "orders-1": 50}
    assert [row.clamped for row in reset.rows] == [False, True]


# ---- rows and export ---------------------------------------------------------------------------------------------


def test_row_counts_what_the_group_rereads_or_skips_within_the_log():
    back = PlanRow(P0, current=300, log_start=100, log_end=500, target=50)
    assert (back.delta, back.records_to_reread, back.records_to_skip) == (-250, 200, 0)
    ahead = PlanRow(P0, current=20, log_start=100, log_end=500, target=150)  # 20..99 are gone already
    assert (ahead.delta, ahead.records_to_reread, ahead.records_to_skip) == (130, 0, 50)
    fresh = PlanRow(P0, current=None, log_start=100, log_end=500, target=150)
    assert (fresh.delta, fresh.records_to_reread, fresh.records_to_skip) == (None, None, None)


def test_export_is_kafkas_single_group_csv_sorted_by_topic_then_partition():
    refs = [PartitionRef("orders", 10), PartitionRef("orders", 2), PartitionRef("audit", 0)]
    reset = plan(ToOffset(5), partitions=refs, log_start=dict.fromkeys(refs, 0), log_end=dict.fromkeys(refs, 9))
    assert reset.export_csv() == "audit,0,5\norders,2,5\norders,10,5\n"
    assert parse_reset_file(reset.export_csv(), group=GROUP) == reset.targets


@pytest.mark.parametrize(("strategy", "text"), [(ToEarliest(), "--to-earliest"), (ToCurrent(), "--to-current"),
                                                (ShiftBy(-3), "--shift-by -3"), (FromFile("x"), "--from-file"),
                                                (ByDuration("PT1H"), "--by-duration PT1H")])
def test_strategies_describe_themselves_as_kafka_options(strategy, text):
    assert describe_strategy(strategy) == text


def test_plan_errors_are_value_errors_for_callers_that_do_not_know_the_type():
    assert issubclass(PlanError, ValueError)
