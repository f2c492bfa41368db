"""The project's import structure, read from the source with `ast` (nothing is imported): three layers, each
importing only the ones below it, apps → platform (console/) → gateway (gateway/: the one face of Kafka and of Kafka
Connect, which imports nothing of ours but itself and Django's settings); devstack/ (the servers `make run` and the
tests start) beside them, which runtime code never imports; no import circle; no Kafka client library outside the
gateway. Where code still breaks a rule, it is listed below with its reason, so this test passes today and the
lists only shrink."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = frozenset({"topics", "records", "offsets", "replication", "access", "transactions", "alerts", "sparkjobs",
                  "connect", "brokers", "masking", "config_as_code", "changes", "api"})
# bench/ and tests/ are left out on purpose: benchmarks compare the gateway with a raw client, and tests reach in.
PLATFORM, GATEWAY, DEVSTACK = "console", "gateway", "devstack"
PACKAGES = (PLATFORM, GATEWAY, DEVSTACK, *sorted(APPS))
# console/ modules that may name the apps: the project's wiring (URLs, installed apps, the Celery app).
WIRING = frozenset({"console.urls", "console.settings", "console.celery"})
KAFKA_LIBRARIES = frozenset({"confluent_kafka", "py4j"})
# Code that runs inside Spark's driver and executors, not in the console's processes: it is shipped there with
# --py-files (sparkjobs.runner) and has no gateway to call.
SPARK_SIDE = ("sparkjobs.jobs.",)

# Imports inside a function that close a circle on purpose, each with why it is lazy: (importer, imported).
# Imports inside functions count like any other: a circle hidden in a function is still a circle.
LAZY_ON_PURPOSE: dict[tuple[str, str], str] = {}
# Import circles outside gateway/kafka, as sets of modules, each with why it is still there. None today.
KNOWN_CIRCLES: dict[frozenset[str], str] = {}
# console/ modules that still import an app, each with why: (importer, app). None today.
KNOWN_UPWARD: dict[tuple[str, str], str] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def project_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "__pycache__" not in path.parts:
                modules[_module_name(path)] = path
    return modules


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, is_package: bool):
    """(imported name, in a function) for each import; `from a import b` yields a.b, which is a module or not."""
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                continue  # never run: annotations only
            lazy = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((alias.name, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = module.split(".") if is_package else module.split(".")[:-1]
                    base = base[:len(base) - child.level + 1]
                    source = ".".join(base + ([child.module] if child.module else []))
                else:
                    source = child.module or ""
                found.append((source, in_function))
                found.extend((f"{source}.{alias.name}", in_function) for alias in child.names)
            visit(child, lazy)

    visit(tree, False)
    return found


@cache
def import_graph() -> dict[str, dict[str, bool]]:
    """Each project module's imports of project modules, and whether every such import is inside a function.

    Importing a.b.c runs a/b/__init__.py first; that implied edge is left out, as import checkers do: a package
    whose __init__ imports its own modules (gateway.kafka.types, gateway.kafka.sandbox) would otherwise close a
    circle with each module of it, one Python resolves without harm."""
    modules = project_modules()
    graph: dict[str, dict[str, bool]] = {}
    for module, path in modules.items():
        edges: dict[str, bool] = {}
        for name, lazy in _imports(ast.parse(path.read_text(), str(path)), module, path.name == "__init__.py"):
            if name in modules and name != module:
                edges[name] = edges.get(name, True) and lazy
        graph[module] = edges
    return graph


@cache
def external_imports() -> dict[str, set[str]]:
    """Each project module's imports of top-level names that are not the project's (libraries)."""
    found: dict[str, set[str]] = {}
    for module, path in project_modules().items():
        tree = ast.parse(path.read_text(), str(path))
        found[module] = {name.split(".")[0] for name, _ in _imports(tree, module, path.name == "__init__.py")}
    return found


def _circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    circles = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        circles.append(frozenset(component))
    return circles


def test_the_walk_sees_the_project():
    modules = project_modules()
    assert {"gateway.kafka.admin", "gateway.kafka.types", "offsets.services", "sparkjobs.runner"} <= set(modules)
    assert "gateway.kafka.librdkafka.client" in import_graph()["gateway.kafka.librdkafka.base"]


def test_no_import_circle():
    graph = {module: {target for target in edges if (module, target) not in LAZY_ON_PURPOSE}
             for module, edges in import_graph().items()}
    circles = [circle for circle in _circles(graph) if circle not in KNOWN_CIRCLES]
    assert circles == [], "import circles: " + "; ".join(" <-> ".join(sorted(c)) for c in circles)


def test_lazy_and_known_lists_name_what_is_still_there():
    graph = import_graph()
    assert [pair for pair in LAZY_ON_PURPOSE if pair[1] not in graph.get(pair[0], {})] == []
    assert [circle for circle in KNOWN_CIRCLES if circle not in _circles(
        {module: set(edges) for module, edges in graph.items()})] == []


def test_console_never_imports_an_app():
    upward = sorted((module, target.split(".")[0]) for module, edges in import_graph().items()
                    if module.split(".")[0] == "console" and module not in WIRING
                    for target in edges if target.split(".")[0] in APPS)
    assert sorted({pair for pair in upward if pair not in KNOWN_UPWARD}) == []
    assert sorted(set(KNOWN_UPWARD) - set(upward)) == []  # fixed: take it off the list


def _layer(module: str) -> str:
    top = module.split(".")[0]
    return "app" if top in APPS else top


def test_the_gateway_imports_only_itself():
    upward = sorted((module, target) for module, edges in import_graph().items() if _layer(module) == GATEWAY
                    for target in edges if _layer(target) != GATEWAY)
    assert upward == []
    django = sorted((module, name) for module, path in project_modules().items() if _layer(module) == GATEWAY
                    for name, _ in _imports(ast.parse(path.read_text()), module, path.name == "__init__.py")
                    if name.startswith("django") and name not in ("django.conf", "django.conf.settings"))
    assert django == []  # settings only: the gateway works in a process without the rest of Django


def test_runtime_code_never_imports_the_devstack():
    found = sorted((module, target) for module, edges in import_graph().items() if _layer(module) != DEVSTACK
                   for target in edges if _layer(target) == DEVSTACK)
    assert found == []


def test_only_the_gateway_imports_kafka_clients():
    offenders = sorted(module for module, names in external_imports().items()
                       if names & KAFKA_LIBRARIES and module != "gateway.kafka" and not module.startswith(
                           ("gateway.kafka.", *SPARK_SIDE, "devstack.")))
    assert offenders == []
