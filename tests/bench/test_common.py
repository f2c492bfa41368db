"""bench/common.py's smoke mode and its sections of bench/RESULTS.md (fast: no server)."""

from __future__ import annotations

import argparse
import re

import pytest

from bench import common

COMMIT_LINE = re.compile(r"^Commit: `[0-9a-f]{12}`( with uncommitted changes)?\.$")


@pytest.fixture
def parser(monkeypatch):
    monkeypatch.setattr(common, "SMOKE", False)
    monkeypatch.setattr(common, "_COMMIT_AT_START", None)
    monkeypatch.setattr(common, "_LOAD_AT_START", None)
    made = argparse.ArgumentParser()
    made.add_argument("--records", type=int, default=1_000_000)
    made.add_argument("--rounds", type=int, default=3)
    return made


def test_a_full_run_keeps_its_sizes(parser, monkeypatch):
    monkeypatch.setattr("sys.argv", ["bench.py"])
    args = common.parse_args(parser, smoke={"records": 4000, "rounds": 1})
    assert (args.records, args.rounds, args.smoke, common.SMOKE) == (1_000_000, 3, False, False)
    assert common.tool_runs() == 3


def test_smoke_takes_the_smoke_sizes_unless_given(parser, monkeypatch):
    monkeypatch.setattr("sys.argv", ["bench.py", "--smoke", "--rounds", "2"])
    args = common.parse_args(parser, smoke={"records": 4000, "rounds": 1})
    assert (args.records, args.rounds, args.smoke, common.SMOKE) == (4000, 2, True, True)
    assert common.tool_runs() == 1


def test_smoke_sizes_must_name_the_benchs_options(parser, monkeypatch):
    monkeypatch.setattr("sys.argv", ["bench.py", "--smoke"])
    with pytest.raises(ValueError, match="recrods"):
        common.parse_args(parser, smoke={"recrods": 4000})


def test_a_failed_check_stops_the_run():
    common.check(1 == 1, "never said")
    with pytest.raises(common.BenchCheckFailed, match="bench check failed: read 3 of 4"):
        common.check(3 == 4, "read 3 of 4")


def test_a_smoke_run_writes_no_section(parser, monkeypatch, tmp_path, capsys):
    results = tmp_path / "RESULTS.md"
    monkeypatch.setattr(common, "RESULTS", results)
    monkeypatch.setattr("sys.argv", ["bench.py", "--smoke"])
    common.parse_args(parser, smoke={})
    common.write_section("replay", "## Replay (2026-11-29)\n\n`command`\n")
    assert not results.exists()
    assert f"{common.SMOKE_PASSED} replay" in capsys.readouterr().out


def test_a_section_names_its_commit_under_its_title(parser, monkeypatch, tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\n<!-- other:start -->\n## Other (2026-11-01)\n<!-- other:end -->\n"
                       "\n<!-- replay:start -->\n## Replay (2026-11-01)\nold figures\n<!-- replay:end -->\n")
    monkeypatch.setattr(common, "RESULTS", results)
    monkeypatch.setattr("sys.argv", ["bench.py"])
    common.parse_args(parser, smoke={})
    common.write_section("replay", "## Replay (2026-11-29)\n\n`.venv/bin/python bench/replay.py`\n\nnew figures\n")
    text = results.read_text()
    section = text[text.index("<!-- replay:start -->"):]
    lines = section.splitlines()
    assert lines[1] == "## Replay (2026-11-29)" and lines[2] == ""
    assert COMMIT_LINE.match(lines[3]), lines[3]
    assert lines[4:] == ["", "`.venv/bin/python bench/replay.py`", "", "new figures", "<!-- replay:end -->"]
    assert "old figures" not in text and "## Other (2026-11-01)" in text


def test_the_commit_is_the_trees_when_the_run_started(parser, monkeypatch, tmp_path):
    monkeypatch.setattr(common, "RESULTS", tmp_path / "RESULTS.md")
    monkeypatch.setattr("sys.argv", ["bench.py"])
    monkeypatch.setattr(common, "commit_line", lambda: "Commit: `000000000001`.")
    common.parse_args(parser, smoke={})
    monkeypatch.setattr(common, "commit_line", lambda: "Commit: `000000000002`.")
    common.write_section("replay", "## Replay (2026-11-29)\n\nfigures\n")
    assert "`000000000001`" in (tmp_path / "RESULTS.md").read_text()


def test_the_commit_line_names_the_checkout():
    assert COMMIT_LINE.match(common.commit_line())


def test_the_machine_line_says_the_load_when_the_run_started(parser, monkeypatch):
    monkeypatch.setattr("sys.argv", ["bench.py"])
    monkeypatch.setattr(common.os, "getloadavg", lambda: (3.25, 2.0, 1.0))
    common.parse_args(parser, smoke={})
    assert common.machine().endswith("; load average 3.25 (1 min) as the run started")
