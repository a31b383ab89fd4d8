"""The library's structure, read from its source (nothing is imported): sub-packages in layers that import only
downward and never in a circle, heavy packages imported only where they are used, no module or function too long to
read at once, and every dotted module path the repository names pointing at code that exists."""

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
#: The layers, lowest first, as the docstring of src/enkcvs/__init__.py lists them: a module imports from its own
#: layer and those before it only. "" is the top level: the basics (io, rng, ids, machine) and the package's face.
LAYERS = ("", "method", "data", "training", "labelissues", "pipeline", "recording", "report", "runs")
#: Package __init__ modules that are modules of their own; every other one holds a docstring and nothing else, so that
#: importing a module never pays for its siblings.
INIT_MODULES = {"enkcvs", "enkcvs.data.sources"}
#: Third-party packages that cost seconds to import or are optional extras: imported inside the functions that use
#: them, except in the modules below, which only training and its benchmarks import.
HEAVY = {"torch", "torchvision", "transformers", "timm", "cleanlab", "matplotlib", "sklearn", "mlxtend", "PIL", "tqdm"}
HEAVY_AT_IMPORT = {
    "enkcvs.method.losses",
    "enkcvs.method.mixup",
    "enkcvs.training.augment",
    "enkcvs.training.batches",
    "enkcvs.training.device",
    "enkcvs.training.evaluate",
    "enkcvs.training.graphs",
    "enkcvs.training.models",
    "enkcvs.training.optimizer",
    "enkcvs.training.precision",
    "enkcvs.training.stacked",
    "enkcvs.training.state",
    "enkcvs.training.train",
}
MAX_MODULE_LINES = 600  # as ruff formats code (one argument a line where a call does not fit one)
MAX_FUNCTION_LINES = 120  # the def through its last line, docstring included, as ruff formats it


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    modules = {}
    for path in sorted((SRC / "enkcvs").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


MODULES = _modules()
TREES = {name: ast.parse(path.read_text(), filename=str(path)) for name, path in MODULES.items()}


def _imports(name: str) -> Iterator[tuple[str, int, bool]]:
    """The modules of the package that ``name`` imports: (module, line, whether at module level)."""
    tree = TREES[name]
    top = {id(node) for node in tree.body}
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    [*package.split(".")[: len(package.split(".")) - node.level + 1], *filter(None, [base])]
                )
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES and "." in target:
                target = target.rpartition(".")[0]
            if target in MODULES:
                yield target, node.lineno, id(node) in top


def _third_party(name: str) -> Iterator[tuple[str, bool]]:
    """The top-level names of what ``name`` imports from outside the package, and whether at module level."""
    tree = TREES[name]
    top = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((alias.name.split(".")[0], id(node) in top) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node.module.split(".")[0], id(node) in top


def _layer(name: str) -> str:
    parts = name.split(".")
    return (
        parts[1]
        if len(parts) > 2 or (len(parts) == 2 and name in MODULES and MODULES[name].name == "__init__.py")
        else ""
    )


def _package(name: str) -> str:
    return name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]


def test_every_sub_package_is_a_layer_and_the_package_docstring_lists_them_in_order():
    packages = {path.parent.name for path in (SRC / "enkcvs").glob("*/__init__.py")}
    assert packages == set(LAYERS[1:])
    listed = re.findall(r":mod:`enkcvs\.(\w+)`", ast.get_docstring(TREES["enkcvs"]))
    assert [layer for layer in dict.fromkeys(listed) if layer in LAYERS] == list(LAYERS[1:])


def test_imports_point_down_only():
    upward = [
        f"{name} (layer {_layer(name) or 'top'}), line {line}: imports {target} (layer {_layer(target)})"
        for name in MODULES
        if name != "enkcvs"  # the face hands on enkcvs.select, imported on first use
        for target, line, _ in _imports(name)
        if LAYERS.index(_layer(target)) > LAYERS.index(_layer(name))
    ]
    assert upward == []


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_between_modules_or_packages():
    modules = {
        name: {target for target, _, _ in _imports(name) if target != name} for name in MODULES if name != "enkcvs"
    }
    packages: dict[str, set[str]] = {}
    for name, targets in modules.items():
        packages.setdefault(_package(name), set()).update(
            _package(target) for target in targets if _package(target) != _package(name)
        )
    assert _cycles(modules) == []
    assert _cycles(packages) == []


def test_package_inits_hold_a_docstring_only():
    busy = [
        name
        for name in MODULES
        if MODULES[name].name == "__init__.py"
        and name not in INIT_MODULES
        and any(not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)) for node in TREES[name].body)
    ]
    assert busy == []


def test_heavy_packages_are_imported_where_they_are_used():
    """A workflow job that trains nothing must not pay for torch or matplotlib: only the modules of
    :data:`HEAVY_AT_IMPORT` import a heavy package at module level, and no other module imports one of them at
    module level."""
    heavy = {name for name in MODULES if any(top and package in HEAVY for package, top in _third_party(name))}
    assert heavy == HEAVY_AT_IMPORT
    light_importing_heavy = [
        f"{name}, line {line}: {target}"
        for name in MODULES
        if name not in heavy
        for target, line, top in _imports(name)
        if top and target in heavy
    ]
    assert light_importing_heavy == []


def test_no_module_is_too_long():
    long = {name: len(MODULES[name].read_text().splitlines()) for name in MODULES}
    assert {name: lines for name, lines in long.items() if lines > MAX_MODULE_LINES} == {}


def test_no_function_is_too_long():
    long = [
        f"{name}.{node.name} (line {node.lineno}): {node.end_lineno - node.lineno + 1} lines"
        for name in MODULES
        for node in ast.walk(TREES[name])
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []


#: Files that name the library's modules: its code, tests, workflow, benchmarks, configs and pages.
NAMING = [
    "src/**/*.py",
    "tests/*.py",
    "workflow/**/*.py",
    "workflow/**/*.smk",
    "workflow/**/*.yaml",
    "benchmarks/*.py",
    "*.md",
    "docs/*.md",
    "benchmarks/*.md",
    "config/*.md",
    "results/*.md",
    "config/*.yaml",
    "envs/*.yaml",
    "Makefile",
    "pyproject.toml",
]
#: ``enkcvs.json``: the file of method ``enkcvs``, no module.
FILE_SUFFIXES = {"json", "csv", "md", "tex", "png", "pdf", "parquet", "npz"}
DOTTED = re.compile(r"(?<![\w./-])enkcvs((?:\.[A-Za-z_]\w*)+)")


def _defined(name: str) -> set[str]:
    """The names a module defines at its top level (functions, classes, assignments, imports) and its submodules."""
    names = {child.rpartition(".")[2] for child in MODULES if child.rpartition(".")[0] == name}
    for node in TREES[name].body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {leaf.id for target in targets for leaf in ast.walk(target) if isinstance(leaf, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    if name == "enkcvs":  # handed on by the face's __getattr__, as its __all__ lists them
        names |= {
            element.value
            for node in TREES[name].body
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets)
            for element in node.value.elts
        }
    return names


def _unknown(path: str) -> str | None:
    """Why ``enkcvs.<path>`` names nothing, or None where it names a module, a name a module defines or an attribute
    every module has."""
    parts = path.split(".")
    for end in range(len(parts), 0, -1):
        module = ".".join(["enkcvs", *parts[:end]])
        if module in MODULES:
            rest = parts[end:]
            if rest and rest[0] not in _defined(module) and not re.fullmatch(r"__\w+__", rest[0]):
                return f"{module} has no {rest[0]}"
            return None
    if parts[0] in _defined("enkcvs") or re.fullmatch(r"__\w+__", parts[0]) or parts[0] in FILE_SUFFIXES:
        return None
    return f"no module enkcvs.{parts[0]}"


def _prose(path: Path) -> str:
    """What of a file may name a module in words: a Python file's strings and comments (its code is checked by running
    it), any other file whole."""
    text = path.read_text(errors="replace")
    if path.suffix != ".py":
        return text
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return "\n".join(token.string for token in tokens if token.type in (tokenize.STRING, tokenize.COMMENT))


def test_every_module_path_the_repository_names_exists():
    """Docstrings, comments, pages and configs follow the modules when they move."""
    named = sorted(
        {
            (str(path.relative_to(REPO)), match[1][1:])
            for pattern in NAMING
            for path in REPO.glob(pattern)
            if path.is_file()
            for match in DOTTED.finditer(_prose(path))
        }
    )
    assert len(named) > 100
    assert [f"{file}: enkcvs.{path}: {why}" for file, path in named if (why := _unknown(path))] == []
