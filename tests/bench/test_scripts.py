"""What the smoke test relies on, read from the sources (fast): the helpers in bench/ are not scripts, and every
script parses its command line with bench/common.py:parse_args, which gives it --smoke and its smoke sizes, and
`make bench` runs every script once."""

from __future__ import annotations

import ast
import re

import pytest

from tests.bench.scripts import BENCH, HELPERS, ROOT, bench_scripts


def _runs_as_script(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) for node in tree.body)


def _smoke_sizes(tree: ast.Module) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and ast.unparse(node.func) == "parse_args"
            and any(keyword.arg == "smoke" for keyword in node.keywords)]


def test_the_scripts_are_found():
    assert len(bench_scripts()) >= 20
    assert all((BENCH / f"{name}.py").exists() for name in HELPERS)


@pytest.mark.parametrize("name", sorted(HELPERS - {"__init__"}))
def test_a_helper_has_no_command_line(name):
    assert not _runs_as_script(ast.parse((BENCH / f"{name}.py").read_text())), \
        f"bench/{name}.py runs as a script: take it out of HELPERS (tests/bench/scripts.py) and give it --smoke"


@pytest.mark.parametrize("script", bench_scripts(), ids=lambda path: path.stem)
def test_a_script_has_a_smoke_mode(script):
    tree = ast.parse(script.read_text())
    assert _runs_as_script(tree)
    assert len(_smoke_sizes(tree)) == 1, \
        f"bench/{script.name} must parse its options with bench.common.parse_args(parser, smoke={{...}})"


def test_make_bench_runs_every_script_once():
    makefile = (ROOT / "Makefile").read_text()
    listed = re.search(r"^BENCHES := ((?:.*\\\n)*.*)$", makefile, re.M).group(1).replace("\\\n", " ").split()
    assert sorted(listed) == [path.stem for path in bench_scripts()] and len(set(listed)) == len(listed)
