"""The console's dry run against Kafka's own ConsumerGroupCommand, for every strategy and scope, same state."""

import io
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command

pytestmark = [pytest.mark.kafka, pytest.mark.parity, pytest.mark.django_db]

GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


def _kafka(kafka_node, group, scope, strategy, tmp_path) -> tuple[int, list[str], str]:
    args = ["--bootstrap-server", kafka_node.bootstrap, "--group", group, "--reset-offsets", *scope, *strategy,
            "--dry-run", "--export"]
    result = kafka_node.run_tool(GROUP_COMMAND, *args)
    lines = sorted(line for line in result.stdout.splitlines() if line.count(",") == 2)
    return result.returncode, lines, result.stdout + result.stderr


def _console(group, scope, strategy) -> list[str]:
    out = io.StringIO()
    call_command("reset_offsets", "--cluster", "local", "--group", group, *scope, *strategy, "--dry-run", "--export",
                 stdout=out)
    return sorted(out.getvalue().splitlines())


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


STRATEGIES = {
    "to-earliest": lambda s: ["--to-earliest"],
    "to-latest": lambda s: ["--to-latest"],
    "to-current": lambda s: ["--to-current"],
    "to-offset in range": lambda s: ["--to-offset", "4"],
    "to-offset above end (clamped)": lambda s: ["--to-offset", "100"],
    "to-offset below start (clamped)": lambda s: ["--to-offset", "0"],
    "to-datetime UTC": lambda s: ["--to-datetime", _iso(s["base"] + 6 * 60_000 + 500)],
    "to-datetime with zone": lambda s: ["--to-datetime", datetime.fromtimestamp(
        (s["base"] + 12 * 60_000) / 1000, UTC).astimezone().strftime("%Y-%m-%dT%H:%M:%S.000%z")],
    "to-datetime after the last record": lambda s: ["--to-datetime", _iso(s["base"] + 3_600_000)],
    "by-duration": lambda s: ["--by-duration", "PT15M30S"],
}
SCOPES = {
    "all topics": lambda s: ["--all-topics"],
    "one topic": lambda s: ["--topic", s["topic"]],
    "chosen partitions": lambda s: ["--topic", f"{s['topic']}:0,2"],
}


@pytest.mark.parametrize("scope_name", SCOPES)
def test_every_strategy_matches_kafkas_dry_run(seeded, kafka_node, tmp_path, scope_name):
    scope = SCOPES[scope_name](seeded)
    strategies = {name: make(seeded) for name, make in STRATEGIES.items()}
    # Kafka's tool is a JVM start per strategy, mostly CPU: two at a time on the two cores; nothing changes the
    # group meanwhile, so the order does not matter.
    with ThreadPoolExecutor(max_workers=2) as pool:
        tool = dict(zip(strategies, pool.map(
            lambda strategy: _kafka(kafka_node, seeded["group"], scope, strategy, tmp_path), strategies.values())))
    mismatches = {}
    for name, strategy in strategies.items():
        code, expected, output = tool[name]
        assert code == 0 and expected, f"{name}: Kafka's tool failed: {output}"
        actual = _console(seeded["group"], scope, strategy)
        if actual != expected:
            mismatches[name] = {"kafka": expected, "console": actual}
    assert mismatches == {}


@pytest.mark.parametrize("scope_name", ["all topics", "chosen partitions"])
@pytest.mark.parametrize("delta", ["-2", "50", "-40"])
def test_shift_by_matches_kafka_where_every_partition_has_a_commit(seeded, kafka_node, tmp_path, scope_name, delta):
    scope = SCOPES[scope_name](seeded) if scope_name == "all topics" else ["--topic", f"{seeded['topic']}:0,1"]

    code, expected, output = _kafka(kafka_node, seeded["group"], scope, ["--shift-by", delta], tmp_path)

    assert code == 0 and expected, output
    assert _console(seeded["group"], scope, ["--shift-by", delta]) == expected


def test_shift_by_without_a_commit_fails_like_kafka(seeded, kafka_node, tmp_path):
    scope = ["--topic", seeded["topic"]]  # partition 2 has no commit

    code, expected, output = _kafka(kafka_node, seeded["group"], scope, ["--shift-by", "1"], tmp_path)

    assert expected == [] and "since there is no current committed offset" in output
    with pytest.raises(CommandError, match=f"Cannot shift offset for partition {seeded['topic']}-2 since there is no"):
        _console(seeded["group"], scope, ["--shift-by", "1"])


def test_from_file_matches_kafka(seeded, kafka_node, tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text(f"{seeded['topic']},0,1\n{seeded['topic']},1,4\n{seeded['topic']},2,9\n")

    code, expected, output = _kafka(kafka_node, seeded["group"], [], ["--from-file", str(plan)], tmp_path)

    assert code == 0 and expected, output
    assert _console(seeded["group"], [], ["--from-file", str(plan)]) == expected


def test_export_of_one_plan_feeds_from_file(seeded, kafka_node, tmp_path):
    """Kafka's documented round trip: --export a plan, then --from-file it."""
    out = io.StringIO()
    call_command("reset_offsets", "--group", seeded["group"], "--all-topics", "--to-earliest", "--export", stdout=out)
    plan = tmp_path / "exported.csv"
    plan.write_text(out.getvalue())

    assert _console(seeded["group"], [], ["--from-file", str(plan)]) == sorted(out.getvalue().splitlines())
