"""bench/RESULTS.md says, for each section of figures, the command that makes them, the commit and the date (in
the title)."""

from __future__ import annotations

import re

from tests.bench.scripts import BENCH

SECTION = re.compile(r"<!-- ([\w-]+):start -->\n(.*?)\n<!-- \1:end -->", re.S)
COMMIT = re.compile(r"^Commit: (`[0-9a-f]{12}`|unknown)[^\n]*\.$", re.M)
COMMAND = re.compile(r"`(?:flock \S+ )?\.venv/bin/python bench/(\w+)\.py[^`]*`")


def sections() -> dict[str, str]:
    return dict(SECTION.findall((BENCH / "RESULTS.md").read_text()))


def test_every_section_names_its_command_commit_and_date():
    found = sections()
    assert len(found) >= 20
    for name, body in found.items():
        title = body.splitlines()[0]
        assert re.match(r"^## .+ \(\d{4}-\d{2}-\d{2}\)$", title), f"{name}: title without a date: {title}"
        assert COMMIT.search(body), f"{name}: no 'Commit: `sha`...' line"
        command = COMMAND.search(body)
        assert command, f"{name}: no command (`.venv/bin/python bench/<script>.py ...`)"
        assert (BENCH / f"{command.group(1)}.py").exists(), f"{name}: bench/{command.group(1)}.py does not exist"


def test_the_sections_are_whole():
    text = (BENCH / "RESULTS.md").read_text()
    starts = re.findall(r"<!-- ([\w-]+):start -->", text)
    assert sorted(starts) == sorted(sections()) and len(set(starts)) == len(starts)
