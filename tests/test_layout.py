"""The layout rules of the developers' guide, checked on the source:
analyzers/ (the engine) never imports Django or kb/, and no two modules of
kb/ or analyzers/ import each other in a cycle (top-level imports; a cycle
works only by accident of import order)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import ROOT

PACKAGES = ("kb", "analyzers")


def _modules(package: str) -> dict[str, Path]:
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        if "migrations" in path.parts:
            continue
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(path: Path, *, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # Top level: the module body only (imports inside functions, and those under
    # `if TYPE_CHECKING:`, do not run at import time).
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def _internal_deps(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of kb/ and analyzers/ that `name` imports at its top level.
    `from pkg import sub` depends on the submodule; a module's own parent
    packages are not dependencies (Python runs them first, by design)."""
    deps = {m for m in _imports(path, top_level_only=True) if m in modules}
    packages = {d for d in deps if any(other.startswith(d + ".") for other in deps)}
    return {d for d in deps - packages if d != name and not name.startswith(d + ".")}


@pytest.mark.parametrize("module", sorted(_modules("analyzers")))
def test_no_analyzers_module_imports_django_or_kb(module):
    imported = _imports(_modules("analyzers")[module], top_level_only=False)
    offending = sorted(name for name in imported if name.split(".")[0] in ("django", "kb"))
    assert not offending, f"{module} imports {offending}: the engine runs without Django"


def test_no_import_cycle_in_kb_or_analyzers():
    modules = {name: path for package in PACKAGES for name, path in _modules(package).items()}
    graph = {name: sorted(_internal_deps(name, path, modules)) for name, path in modules.items()}
    cycles, state = [], {}

    def visit(name: str, stack: list[str]) -> None:
        state[name] = "open"
        for dep in graph[name]:
            if state.get(dep) == "open":
                cycles.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep, stack + [dep])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


MAX_LINES = 300


@pytest.mark.parametrize("package", PACKAGES)
def test_no_python_file_of_kb_or_analyzers_is_over_300_lines(package):
    # Migrations are generated; everything else is split by responsibility before it grows past this.
    long = {name: n for name, path in _modules(package).items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}
