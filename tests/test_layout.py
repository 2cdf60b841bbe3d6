"""The shape of the library: the tree reads as the pipeline, with no import cycle and no giant module."""

import ast
import re
from pathlib import Path

import tomllib

import abeq

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "abeq"
MAX_LINES = 400


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every abeq module this file imports, at module level or inside a function (lazy imports
    count: they run too), with the packages whose __init__ the import executes. A package's own
    __init__ is not counted for its submodules: it runs first, whatever they import."""
    name = _module_name(path)
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + (1 if is_pkg else 0)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
        ancestors = {".".join(name.split(".")[:i]) for i in range(1, len(name.split(".")))}
        for t in targets:
            if t == "abeq" or t.startswith("abeq."):
                parts = t.split(".")
                out.update(p for i in range(2, len(parts)) if (p := ".".join(parts[:i])) not in ancestors)
                out.add(t)
    known = {_module_name(p) for p in PKG.rglob("*.py")}
    return {m for m in out if m in known and m != name}


def test_no_import_cycle_inside_abeq():
    graph = {_module_name(p): _imports(p) for p in PKG.rglob("*.py")}
    index, low, stack, on, cycles, counter = {}, {}, [], set(), [], [0]

    def strongconnect(v):  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in graph:
        if v not in index:
            strongconnect(v)
    assert cycles == []


def test_no_module_is_over_400_lines():
    big = {
        str(p.relative_to(ROOT)): n
        for p in PKG.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert big == {}


def test_the_public_surface_is_importable_from_abeq():
    assert len(abeq.__all__) >= 5
    for name in abeq.__all__:
        assert getattr(abeq, name) is not None, name
    report = abeq.build_report
    assert callable(abeq.prepare_run) and callable(report)


def test_test_servers_live_in_abeq_testing_and_the_scripted_model_with_the_providers():
    assert not (PKG / "loopback.py").exists()
    assert (PKG / "testing" / "loopback.py").is_file() and (PKG / "models" / "scripted.py").is_file()
    for test in (ROOT / "tests").glob("*.py"):  # tests import the doubles, never bench/ by path
        assert not re.search(r"sys\.path\.insert\([^)]*bench", test.read_text(encoding="utf-8")), test.name


def test_ruff_is_configured():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["ruff"]["line-length"] <= 110
