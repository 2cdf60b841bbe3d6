"""The shape of the library: the tree reads as the pipeline, with no import cycle and no giant module.

Layers: a folder (or top-level module) of abeq/ imports only its own layer and the layers below it;
an import inside a function counts like one at the top of the file. A folder that holds folders of
separate jobs may be split further (`results/store`, layer 3.1): each of its folders is then a layer
of its own, between its parent's and the next (3.1 is below 3.2, and both below 4), so the folders
inside it depend one way too. The test reads this table.

| layer | folders and modules of abeq/ | what they hold |
|---|---|---|
| 0 | errors, vocab, timestamps, schemas | words, errors, data shapes: no model, no store |
| 0 | prompts, examples | the prompts, the examples |
| 0 | untrusted | untrusted text made inert for a CSV cell, Markdown, a terminal |
| 0 | files | the files abeq reads and writes: bounded reads, regular files of the user's own |
| 0 | lazy | a package's public names, each loaded from its module on first use |
| 1 | documents | the documents under test: read, their sections, @imports, a skill's folder, `git:REV:PATH` |
| 1 | models | the providers (the scripted test model is one), one call path |
| 2 | sets | transfer sets: read, imported, drafted, confirmed |
| 3 | results | what runs leave behind: the store, and what is read from it |
| 3.1 | results/store | the store: interfaces, `Sql*` parts over a sqlite or PostgreSQL connection, copy |
| 3.2 | results/reports | what a reader gets from the store: report, run record, exports, agreement, diff |
| 3.3 | results/review | what reviewers do with a report: agree or override, cases shared out |
| 4 | execution, comparator | a run (runner, judge, engine, preflight); the blind comparator |
| 5 | api, calibration, mutation | the public entry point; the judge measured on a suite; `abeq mutate` |
| 6 | desk | the desk's logic (its router app.py, and its pages in desk/desk_pages/, lay it out) |
| 6 | gate | the pull-request gate: abeq.toml, what changed, base against head, the comment |
| 7 | cli, agents, `__main__` | the command line (`abeq app` starts the desk); `abeq mcp`, the skill |
| 8 | testing | servers and helpers for tests and benchmarks: no library module imports it |
"""

import ast
import functools
import importlib
import re
import types
from pathlib import Path

import pytest
import tomllib

import abeq

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "abeq"
MAX_LINES = 400  # past this a module is bulky: said as a warning, so that it is read, not split blindly
HARD_MAX_LINES = 600  # past this it holds more than one job: the test fails
MAX_PAGE_LINES = 120


def _module_name(path: Path, pkg: Path = PKG) -> str:
    parts = ["abeq", *path.relative_to(pkg).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _known(pkg: Path) -> set[str]:
    """Every module of the tree at `pkg`."""
    return {_module_name(p, pkg) for p in pkg.rglob("*.py")}


def _imports(path: Path, pkg: Path = PKG, known: set[str] | None = None) -> set[str]:
    """Every abeq module this file imports, at module level or inside a function (lazy imports
    count: they run too), with the packages whose __init__ the import executes. A package's own
    __init__ is not counted for its submodules: it runs first, whatever they import. A module loaded
    by name counts too: a dotted name given to import_module, or kept in a module-level constant (the
    default a loader reads; issue 48: the scripted provider loaded abeq.testing's rules so).
    `known`: the tree's modules (_known), when the caller reads many files of one tree."""
    st = path.stat()
    out = _named_imports(path, pkg, st.st_mtime_ns, st.st_size)
    known = _known(pkg) if known is None else known
    return {m for m in out if m in known and m != _module_name(path, pkg)}


@functools.cache  # several tests read every module: each file is parsed once per version
def _named_imports(path: Path, pkg: Path, mtime_ns: int, size: int) -> frozenset[str]:
    name = _module_name(path, pkg)
    is_pkg = path.name == "__init__.py"
    ancestors = {".".join(name.split(".")[:i]) for i in range(1, len(name.split(".")))}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    loaded: list = [n.value for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))]
    targets: list[str] = []
    for node in ast.walk(tree):  # one walk: a tree of every module is ~500,000 nodes
        if isinstance(node, ast.Import):
            targets += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + (1 if is_pkg else 0)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets += [mod] + [f"{mod}.{a.name}" for a in node.names]
        elif (
            isinstance(node, ast.Call)
            and node.args
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
        ):
            loaded.append(node.args[0])
    # the modules it loads by name
    targets += [v.value for v in loaded if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    out: set[str] = set()
    for t in targets:
        if t == "abeq" or t.startswith("abeq."):
            parts = t.split(".")
            out.update(p for i in range(2, len(parts)) if (p := ".".join(parts[:i])) not in ancestors)
            out.update({t} - ancestors)  # `from . import x`: the package itself ran first
    return frozenset(out)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module: each an import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

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
    return cycles


def test_no_import_cycle_inside_abeq():
    known = _known(PKG)
    assert _cycles({_module_name(p): _imports(p, known=known) for p in PKG.rglob("*.py")}) == []


def test_no_import_cycle_between_the_scripts_of_a_bench_folder():
    """A bench folder's scripts import each other by bare name (the folder is on sys.path): no loop,
    or running one as a script loads a second copy of it under its module name (issue 48:
    bench/calibration's author.py and scenarios.py imported each other)."""
    for folder in {p.parent for p in (ROOT / "bench").rglob("*.py")}:
        names = {p.stem for p in folder.glob("*.py")}
        graph = {}
        for path in folder.glob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
            imported |= {
                n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level
            }
            graph[path.stem] = {m.split(".")[0] for m in imported} & names - {path.stem}
        assert _cycles(graph) == [], folder


def _layers(doc: str | None = None) -> dict[str, tuple[int, ...]]:
    """Each folder or top-level module of abeq/ (and each folder of a split one, `results.store`) with
    its layer as numbers to compare (3.1 is (3, 1): above 3, below 3.2 and 4), read from the table."""
    rows = re.findall(r"^\| (\d+(?:\.\d+)?) \| ([^|]+) \|", doc or __doc__ or "", re.M)
    return {
        unit.strip(" `").replace("/", "."): tuple(int(d) for d in n.split("."))
        for n, units in rows
        for unit in units.split(",")
    }


def _unit(module: str, layers: dict[str, tuple[int, ...]]) -> str | None:
    """The row of the table a module of abeq/ (or an import's target) belongs to: the longest one
    its dotted name starts with; None for abeq itself."""
    parts = module.split(".")[1:]
    return next((u for i in range(len(parts), 0, -1) if (u := ".".join(parts[:i])) in layers), None)


def _units_of_the_tree(pkg: Path, layers: dict[str, tuple[int, ...]]) -> set[str]:
    """The rows the tree needs: each module or folder of abeq/, and each folder inside a split one."""
    split = {u.split(".")[0] for u in layers if "." in u}
    out = set()
    for p in pkg.rglob("*.py"):
        rel = p.relative_to(pkg).with_suffix("").parts
        if len(rel) == 1:
            out.add(rel[0])
        else:
            out.add(f"{rel[0]}.{rel[1]}" if rel[0] in split and len(rel) > 2 else rel[0])
    return out - {"__init__"}


def upward_imports(pkg: Path, doc: str | None = None) -> list[str]:
    """Every import of a module of `pkg` that points up the layer table (`doc`'s, else this file's)."""
    layers = _layers(doc)
    assert _units_of_the_tree(pkg, layers) == set(layers)  # a new folder or module takes its place
    upward, known = [], _known(pkg)
    for path in pkg.rglob("*.py"):
        name = _module_name(path, pkg)
        unit = _unit(name, layers)
        if unit is None:
            continue  # abeq/__init__.py imports its public names by string, when first used
        for target in _imports(path, pkg, known):
            to = _unit(target, layers)  # None: the package itself, empty
            if to is not None and layers[to] > layers[unit]:
                upward.append(f"{name} -> {target} ({unit} {layers[unit]} < {to} {layers[to]})")
    return sorted(upward)


def test_every_import_points_down_the_layer_table():
    assert upward_imports(PKG) == []


def test_the_layer_check_sees_folders_inside_a_split_folder(tmp_path):
    """A folder split into layers (results/ into store, reports) depends one way: the store importing
    the report is upward though both are results/ (the check once saw only abeq/'s own folders)."""
    doc = (
        "| 0 | errors | e |\n| 3 | results | r |\n| 3.1 | results/store | s |\n| 3.2 | results/reports | r |"
    )
    files = {
        "__init__.py": "",
        "errors.py": "",
        "results/__init__.py": "",
        "results/store/__init__.py": "",
        "results/store/runlog.py": "from ...errors import E\n",
        "results/reports/__init__.py": "",
        "results/reports/report.py": "from ..store.runlog import R\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert upward_imports(tmp_path, doc) == []
    (tmp_path / "results/store/merge.py").write_text("from ..reports.report import build\n")
    assert upward_imports(tmp_path, doc) == [
        "abeq.results.store.merge -> abeq.results.reports (results.store (3, 1) < results.reports (3, 2))",
        "abeq.results.store.merge -> abeq.results.reports.report "
        "(results.store (3, 1) < results.reports (3, 2))",
    ]
    (tmp_path / "results/extra").mkdir()
    (tmp_path / "results/extra/__init__.py").write_text("")
    with pytest.raises(AssertionError):  # a folder inside a split one takes its place in the table too
        upward_imports(tmp_path, doc)


def test_no_library_module_imports_the_test_helpers():
    known = _known(PKG)
    users = {
        _module_name(p)
        for p in PKG.rglob("*.py")
        if "testing" not in p.relative_to(PKG).parts[:1]
        and any(t == "abeq.testing" or t.startswith("abeq.testing.") for t in _imports(p, known=known))
    }
    assert users == set()


def test_no_module_is_over_600_lines_and_a_bulky_one_is_named():
    """A size limit warns of bulk (issue 34: a module split only to get under a line hides the job it
    does): over 400 lines is a warning to read the module; over 600 fails."""
    import warnings

    sizes = {
        str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in PKG.rglob("*.py")
    }
    bulky = {m: n for m, n in sizes.items() if n > MAX_LINES}
    if bulky:
        warnings.warn(f"modules over {MAX_LINES} lines (does each still do one job?): {bulky}", stacklevel=1)
    assert {m: n for m, n in bulky.items() if n > HARD_MAX_LINES} == {}


def test_no_desk_page_is_over_120_lines():
    """A page lays out what abeq/desk computes: a page that grows past this is thinking."""
    long = {
        p.name: n
        for p in (PKG / "desk" / "desk_pages").glob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_PAGE_LINES
    }
    assert long == {}


# Every public name and the object it must be, written out here (not read from abeq._EXPORTS, so a
# wrong entry there fails): "module:attribute".
PUBLIC = {
    "prepare_run": "abeq.api:prepare_run",
    "run": "abeq.api:run",
    "PreparedRun": "abeq.api:PreparedRun",
    "run_problems": "abeq.api:run_problems",
    "RunSettings": "abeq.execution.settings:RunSettings",
    "mutate": "abeq.mutation.run:mutate",
    "prepare_mutation": "abeq.mutation.run:prepare_mutation",
    "load_document": "abeq.documents.document:load_document",
    "Document": "abeq.documents.document:Document",
    "load_set": "abeq.sets.parse:load",
    "import_set": "abeq.sets.imported:import_set",
    "check_set": "abeq.sets.coverage_report:coverage",
    "confirm_set": "abeq.sets.confirmation:confirm",
    "draft_set": "abeq.sets.drafting:draft",
    "compare": "abeq.comparator.comparator:compare",
    "calibrate": "abeq.calibration.measure:calibrate",
    "Store": "abeq.results.store.store:Store",
    "open_store": "abeq.results.store.store:open_store",
    "build_report": "abeq.results.reports.report:build_report",
    "ModelSpec": "abeq.models.spec:ModelSpec",
    "AbeqError": "abeq.errors:AbeqError",
    "InputError": "abeq.errors:InputError",
}
# Importing these runs them: the CLI (sys.exit(main())) and the desk's Streamlit script (the desk's
# tests and the wheel's browser test run it). Every other module imports with the base dependencies
# alone (llama.cpp, Playwright and the other extras are imported inside functions).
NOT_IMPORTED = {"abeq.__main__", "abeq.desk.app"}


def _every_module() -> list[str]:
    names = (_module_name(p) for p in sorted(PKG.rglob("*.py")))
    return [n for n in names if all(part.isidentifier() for part in n.split(".")) and n not in NOT_IMPORTED]


def test_every_public_name_is_its_documented_object_after_every_module_is_imported():
    """Importing a submodule sets it as an attribute of its package: a public name equal to a
    submodule's would become that module (abeq.run(...) once raised "'module' object is not
    callable" after anything imported abeq/run/). Whatever came first, after every import each name
    is the object documented, through the lazy __getattr__ too."""
    for module in _every_module():
        importlib.import_module(module)
    assert abeq.__all__ == sorted(PUBLIC)
    for name, where in PUBLIC.items():
        module, attr = where.split(":")
        documented = getattr(importlib.import_module(module), attr)
        value = getattr(abeq, name)
        assert value is documented, f"abeq.{name} is {value!r}, not {where}"
        assert abeq.__getattr__(name) is documented, name  # the lazy path holds after the imports
        assert callable(value) and not isinstance(value, types.ModuleType), name
        assert re.search(rf"\b{name}\b", abeq.__doc__), f"abeq's docstring does not list {name}"
        assert name in dir(abeq)


def test_no_public_name_is_a_module_or_folder_of_abeq():
    children = {p.stem for p in PKG.glob("*.py")} | {p.parent.name for p in PKG.glob("*/__init__.py")}
    assert children & set(abeq.__all__) == set()


def test_no_package_binds_a_name_of_its_own_submodules():
    """`abeq.sets` once bound the functions `confirm` and `coverage` over its submodules of those
    names: `import abeq.sets.coverage as c` gave the function. A package's names and its modules'
    names are apart, so each dotted path names one thing."""
    clashes = []
    for init in sorted(PKG.rglob("__init__.py")):
        package = _module_name(init)
        if package in NOT_IMPORTED:
            continue
        submodules = {p.stem for p in init.parent.glob("*.py")} | {
            p.parent.name for p in init.parent.glob("*/__init__.py")
        }
        bound = (
            {
                t.id
                for node in ast.walk(ast.parse(init.read_text(encoding="utf-8")))
                for t in (node.targets if isinstance(node, ast.Assign) else [])
                if isinstance(t, ast.Name)
            }
            | {
                a.asname or a.name
                for node in ast.walk(ast.parse(init.read_text(encoding="utf-8")))
                if isinstance(node, ast.ImportFrom) and node.module  # `from . import x` binds the module
                for a in node.names
            }
            | {
                n.name
                for n in ast.parse(init.read_text(encoding="utf-8")).body
                if isinstance(n, (ast.FunctionDef, ast.ClassDef))
            }
        )
        clashes += [f"{package}.{name}" for name in sorted(bound & submodules)]
    assert clashes == []


def test_test_servers_live_in_abeq_testing_and_the_scripted_model_with_the_providers():
    """The scripted model is a provider (its instances and their state) with the rules that read
    abeq's own prompts beside it, in the library; its instances name no prompt and no data block."""
    assert not (PKG / "loopback.py").exists()
    scripted = PKG / "models" / "scripted"
    assert (PKG / "testing" / "loopback.py").is_file() and (scripted / "provider.py").is_file()
    assert (scripted / "rules.py").is_file() and not list((PKG / "testing").glob("scripted_*.py"))
    provider = (scripted / "provider.py").read_text(encoding="utf-8")
    blocks = {"case_input", "original_run", "run_a", "original_document", "output_a", "document_to_mutate"}
    assert not {b for b in blocks if b in provider}
    tree = ast.parse(provider)
    assigned = {
        t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
    }
    assert not assigned & {"HISTORY", "handler", "_queue"}  # no state of its own outside an instance
    for test in (ROOT / "tests").glob("*.py"):  # tests import the doubles, never bench/ by path
        assert not re.search(r"sys\.path\.insert\([^)]*bench", test.read_text(encoding="utf-8")), test.name


def test_ruff_is_configured():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["ruff"]["line-length"] <= 110
