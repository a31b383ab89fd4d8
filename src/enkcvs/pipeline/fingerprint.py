"""The code a workflow job runs, as one fingerprint: a rule carries it in its params, so that an edit of the package
reruns the jobs whose step it changes and no others (docs/running.md, "Partial reruns").

Read from the source files at parse time, never imported (the planning process has only Snakemake and the standard
library). A script's fingerprint covers every module of the package it imports, directly or through other modules
(imports inside functions included), each package's ``__init__`` on the way, the data files of those packages
(templates, tables) and, where a module imports by name at run time (``importlib.import_module``), every module of
its package. Modules are compared by their syntax tree without docstrings, so that an edit of a comment, a docstring
or the layout reruns nothing.
"""

import ast
import hashlib
from functools import cache
from pathlib import Path


def code_fingerprint(*, script: str | Path, source: str | Path) -> str:
    """The fingerprint of the package code ``script`` runs.

    Parameters
    ----------
    script : a workflow script (a file of Python source).
    source : the folder holding the package (``src/``, where ``enkcvs/`` lies); imports of modules elsewhere (other
        packages') do not count.

    Returns
    -------
    16 hexadecimal digits of a SHA-256 over the modules' syntax trees and the data files, in path order.
    """
    source = Path(source).resolve()
    digest = hashlib.sha256()
    for path in sorted(_closure(_imported_modules(Path(script).resolve(), source, lazy=False), source)):
        digest.update(str(path.relative_to(source)).encode() + b"\0")
        digest.update(_content(path) + b"\0")
    return digest.hexdigest()[:16]


def _closure(roots: frozenset[str], source: Path) -> set[Path]:
    """Files of every module reachable from the module names ``roots``, with their packages' ``__init__`` and data."""
    seen: set[str] = set()
    files: set[Path] = set()
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        path = _module_file(name, source)
        if path is None:  # a name taken from a module or package: a package hands it out by its lazy imports
            package = _module_file(name.rpartition(".")[0], source)
            if package is not None and package.name == "__init__.py":
                pending.extend(_imported_modules(package, source, lazy=True))
            continue
        files.add(path)
        parts = name.split(".")
        pending.extend(".".join(parts[:end]) for end in range(1, len(parts)))
        if path.name == "__init__.py":
            files.update(_data_files(path.parent))
        pending.extend(_imported_modules(path, source, lazy=False))
    return files


def _imported_modules(path: Path, source: Path, *, lazy: bool) -> frozenset[str]:
    """The module names that the file at ``path`` imports; a name imported from a package counts as its
    submodule where one exists; run-time imports by name count every module of the file's package.

    A module's imports count wherever they stand. A package's ``__init__`` runs its top-level imports whenever one of
    its modules is imported, and those inside its functions (lazy exports, ``__getattr__``) only when a name of it is
    asked for: ``lazy=False`` gives the first, ``lazy=True`` the second.
    """
    module = _module_name(path, source)
    is_package = path.name == "__init__.py"
    names, imports_by_name = _imports(path.read_bytes(), module, is_package=is_package, lazy=lazy)
    if imports_by_name and module is not None:
        names = names | _package_modules(module if is_package else module.rpartition(".")[0], source)
    return names  # a name with no file under ``source`` (another package's) leads nowhere in the closure


@cache  # by the file's text, so that a process that fingerprints again after an edit sees it
def _imports(text: bytes, module: str | None, *, is_package: bool, lazy: bool) -> tuple[frozenset[str], bool]:
    """The module names a file's import statements name, and whether it imports by name at run time."""
    tree = ast.parse(text)
    if is_package:
        functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
        if lazy:
            nodes = [node for function in functions for node in ast.walk(function)]
        else:
            inside = {id(node) for function in functions for node in ast.walk(function)}
            nodes = [node for node in ast.walk(tree) if id(node) not in inside]
    else:
        nodes = [] if lazy else list(ast.walk(tree))
    names: set[str] = set()
    imports_by_name = False
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package=is_package)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Attribute) and node.attr == "import_module":
            imports_by_name = True
    return frozenset(names), imports_by_name


def _absolute(node: ast.ImportFrom, module: str | None, *, is_package: bool) -> str:
    """The absolute module name of a ``from ... import`` statement."""
    if not node.level or module is None:
        return node.module or ""
    parts = module.split(".")
    base = parts[: len(parts) - node.level + (1 if is_package else 0)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _module_name(path: Path, source: Path) -> str | None:
    """The module name of a file under ``source``; None for a file elsewhere (a workflow script)."""
    try:
        relative = path.relative_to(source).with_suffix("")
    except ValueError:
        return None
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


def _module_file(name: str, source: Path) -> Path | None:
    """The file of module ``name`` under ``source``; None where there is none (a name imported from a module)."""
    base = source.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _package_modules(package: str, source: Path) -> set[str]:
    """Every module of ``package``, its subpackages' included."""
    folder = source.joinpath(*package.split("."))
    return {_module_name(path, source) for path in folder.rglob("*.py")} - {None}


def _data_files(folder: Path) -> set[Path]:
    """The files of a package folder that are not Python modules, in it and in its folders that are no package."""
    files = set()
    for path in folder.iterdir():
        if path.is_file() and path.suffix != ".py" and path.suffix != ".pyc":
            files.add(path)
        elif path.is_dir() and path.name != "__pycache__" and not (path / "__init__.py").exists():
            files.update(_data_files(path))
    return files


def _content(path: Path) -> bytes:
    """What of a file counts: a module's syntax tree without docstrings, a data file's bytes."""
    text = path.read_bytes()
    return _syntax_without_docstrings(text) if path.suffix == ".py" else text


@cache  # by the file's text (see _imports)
def _syntax_without_docstrings(text: bytes) -> bytes:
    """The dump of a module's syntax tree with its docstrings left out."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree).encode()
