"""A stand-in for ``conda`` that does with an env file what conda does, for tests on machines without a conda channel.

Snakemake's ``--use-conda`` asks conda for its version, its info and its channel priority, creates each env with
``conda env create --file F --prefix P`` and runs a job with ``source <conda>/bin/activate P; ...``. This stand-in
answers the same way (and cleans no package cache, having none): a new prefix for every env (a virtual environment of the test's Python that sees the test
environment's packages, as a conda env would have its listed ones, but never the enkcvs package installed there), the
env file's pip section written to a requirements file in the env file's own folder and installed from there (so a
path in it means what it means to conda), and activation by ``source <root>/bin/activate PREFIX``.
:func:`install` writes it into a folder whose ``bin`` goes first on PATH.
"""

import sys
import sysconfig
from pathlib import Path

_CONDA = '''#!{python}
"""conda, as the tests stand it in (tests/conda_stand_in.py)."""
import json
import os
import subprocess
import sys
import tempfile

import yaml

ROOT = {root!r}
SITE_PACKAGES = {site_packages!r}
args = sys.argv[1:]
if args == ["--version"]:
    print("conda 24.11.3")
elif args[:2] == ["info", "--json"]:
    print(json.dumps({{"conda_prefix": ROOT, "root_prefix": ROOT, "platform": "linux-64"}}))
elif args[:2] == ["config", "--get"]:
    print(json.dumps({{"get": {{"channel_priority": "strict"}}}}))
elif args[:1] == ["clean"]:
    pass  # no package cache to clean
elif args[:2] == ["env", "create"]:
    env_file = args[args.index("--file") + 1].strip('"')
    prefix = args[args.index("--prefix") + 1].strip('"')
    spec = yaml.safe_load(open(env_file))
    subprocess.run([{python!r}, "-m", "venv", "--without-pip", prefix], check=True)
    site = subprocess.run(
        [os.path.join(prefix, "bin", "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    # the conda packages: the test environment's, as plain paths (its .pth files, the editable enkcvs's among them,
    # are not read from there)
    with open(os.path.join(site, "conda_packages.pth"), "w") as pth:
        pth.write("\\n".join(SITE_PACKAGES) + "\\n")
    pip = [entry for item in spec["dependencies"] if isinstance(item, dict) for entry in item.get("pip", [])]
    if pip:
        folder = os.path.dirname(os.path.abspath(env_file))
        with tempfile.NamedTemporaryFile(
            "w", dir=folder, prefix="condaenv.", suffix=".requirements.txt", delete=False
        ) as requirements:
            requirements.write("\\n".join(pip) + "\\n")
        try:
            done = subprocess.run(
                [os.path.join(prefix, "bin", "python"), "-m", "pip", "install", "--no-input", "-U", "-r",
                 requirements.name],
                cwd=folder, capture_output=True, text=True,
            )
        finally:
            os.remove(requirements.name)
        if done.returncode:
            sys.exit("Pip subprocess error:\\n" + done.stdout + done.stderr)
    print("done")
else:
    sys.exit(f"conda stand-in: {{args}} is not a call it stands in for")
'''

_ACTIVATE = """# conda's activate, as the tests stand it in: the env's bin first on PATH
export CONDA_PREFIX="$1"
export PATH="$1/bin:$PATH"
hash -r
"""


def install(folder: Path) -> Path:
    """Write the stand-in into ``folder`` (its ``bin/conda`` and ``bin/activate``); returns ``folder / "bin"``."""
    bin_folder = folder / "bin"
    bin_folder.mkdir(parents=True, exist_ok=True)
    site_packages = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    conda = bin_folder / "conda"
    conda.write_text(_CONDA.format(python=sys.executable, root=str(folder), site_packages=site_packages))
    conda.chmod(0o755)
    (bin_folder / "activate").write_text(_ACTIVATE)
    return bin_folder
