"""Import probe for the test suite: which third-party packages does each workflow job import?

Conda cannot be reached from the test machine, so the env files in envs/ cannot be built and tried. Instead
tests/conftest.py puts this folder on PYTHONPATH of every Snakemake run it starts, and Python imports this module at
start-up in each of that run's processes (site's ``sitecustomize`` hook). With ENKCVS_IMPORT_LOG set to a folder, it
records the top-level name of every absolute import that a job's own code makes: the rule's script (which Snakemake
runs as ``__main__``) and the enkcvs library, at module level or inside a function, by an import statement or through
the standard library (``importlib.import_module``, ``importlib.resources.files``). Imports that third-party packages
make themselves are their own business. At exit it writes ``{"rule": ..., "modules": [...]}`` to a file of its own
in that folder; tests/test_envs.py checks that each rule's env file lists every one. Without the variable it does
nothing.
"""

import os

if os.environ.get("ENKCVS_IMPORT_LOG"):
    import atexit
    import builtins
    import importlib
    import json
    import sys
    import tempfile

    # enkcvs comes from the repository; snakemake from the script preamble, which puts Snakemake's own package on
    # sys.path (an env need not list it).
    _IGNORED = set(sys.stdlib_module_names) | {"enkcvs", "snakemake"}
    _imported = set()

    def _record(name, frame):
        """Record ``name`` if the first frame outside the standard library belongs to the script or to enkcvs."""
        while frame is not None:
            caller = frame.f_globals.get("__name__") or ""
            if caller == "__main__" or caller.partition(".")[0] not in sys.stdlib_module_names:
                break
            frame = frame.f_back
        if frame is not None and (caller in ("__main__", "enkcvs") or caller.startswith("enkcvs.")):
            top = name.partition(".")[0]
            if top not in _IGNORED:
                _imported.add(top)

    _original_import = builtins.__import__
    _original_import_module = importlib.import_module

    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        module = _original_import(name, globals, locals, fromlist, level)  # only imports that succeed are recorded
        if level == 0:
            _record(name, sys._getframe().f_back)  # None when C code imports
        return module

    def _import_module(name, package=None):
        module = _original_import_module(name, package)
        if not name.startswith("."):
            _record(name, sys._getframe().f_back)
        return module

    def _write_log():
        # A job's script defines ``snakemake`` (its preamble unpickles it); other processes log rule None.
        rule = getattr(getattr(sys.modules.get("__main__"), "snakemake", None), "rule", None)
        # Written aside and renamed: a test reading the folder while jobs end sees whole logs only.
        fd, partial = tempfile.mkstemp(suffix=".part", dir=os.environ["ENKCVS_IMPORT_LOG"])
        with os.fdopen(fd, "w") as log:
            json.dump({"rule": rule if isinstance(rule, str) else None, "modules": sorted(_imported)}, log)
        os.replace(partial, partial.removesuffix(".part") + ".json")

    builtins.__import__ = _import
    importlib.import_module = _import_module
    atexit.register(_write_log)
