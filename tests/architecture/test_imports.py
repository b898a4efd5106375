"""The import contracts the folder tree promises, checked on every import in explorer/, function-local ones too.

import-linter (`lint-imports`, configured in pyproject.toml) checks the layers; it reads every import too, but
it reports a cycle only where a layer is broken. This test fails on any cycle at all, on a private name taken
across modules, and on an `except ImportError` that would turn a broken module of ours into a missing feature.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "explorer"


def _modules() -> dict[str, Path]:
    mods = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = path
    return mods


MODULES = _modules()


def _package(name: str) -> str:
    return name if MODULES[name].name == "__init__.py" else name.rsplit(".", 1)[0]


def _imports(name: str):
    """(line, target module, imported names) of every import of ours in module `name`."""
    tree = ast.parse(MODULES[name].read_text(), filename=str(MODULES[name]))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "explorer":
                    yield node.lineno, a.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package(name).split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "explorer":
                continue
            for a in node.names:
                sub = f"{mod}.{a.name}"
                if sub in MODULES:  # `from package import module`
                    yield node.lineno, sub, ()
                else:
                    yield node.lineno, mod, (a.name,)


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for m in MODULES:
        for _, target, _ in _imports(m):
            if target in MODULES and target != m:
                graph[m].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
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
                    comp = []
                    while True:
                        n = stack.pop()
                        on_stack.discard(n)
                        comp.append(n)
                        if n == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_the_checker_finds_a_cycle_and_reads_function_local_imports():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    # A function-local import is an edge like any other (the main window imports its views lazily).
    assert any(t == "explorer.gui.app" for _, t, _ in _imports("explorer.launch"))


def test_no_import_cycle_anywhere_in_explorer():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles (function-local imports included):\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_no_private_name_is_taken_across_modules():
    taken = [
        f"{MODULES[m].relative_to(ROOT.parent)}:{line}: {target}.{n}"
        for m in MODULES
        for line, target, names in _imports(m)
        for n in names
        if n.startswith("_") and not n.startswith("__") and target != m
    ]
    assert not taken, "private names imported from another module:\n" + "\n".join(taken)


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return handler.type is None or any(
        isinstance(t, ast.Name) and t.id in ("ImportError", "ModuleNotFoundError")
        for t in types
    )


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_import_of_ours_is_guarded_by_except_import_error(name):
    tree = ast.parse(MODULES[name].read_text())
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(h) for h in node.handlers):
            for stmt in node.body:
                for sub in ast.walk(stmt):
                    mod = getattr(sub, "module", None) or ""
                    names = [a.name for a in getattr(sub, "names", [])] if isinstance(sub, ast.Import) else []
                    if isinstance(sub, (ast.Import, ast.ImportFrom)) and (
                        mod.startswith("explorer") or getattr(sub, "level", 0) or any(n.startswith("explorer") for n in names)
                    ):
                        bad.append(sub.lineno)
    assert not bad, f"{name}: an import of ours inside try/except ImportError at lines {bad} would hide a broken module"
