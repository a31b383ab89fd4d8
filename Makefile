# `make run` and `make test` set everything up on a fresh machine (Python >= 3.11) and run.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint readme record record-cells clean gpu-check wheelhouse install-offline

$(BIN)/.installed: requirements.lock requirements-nodeps.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --no-cache-dir --upgrade pip
	$(BIN)/python -m pip install --quiet --no-cache-dir --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-cache-dir --no-deps --require-hashes -r requirements-nodeps.lock
	$(BIN)/python -m pip install --quiet --no-cache-dir --no-deps --editable .
	touch $@

run: $(BIN)/.installed
	SNAKEMAKE=$(BIN)/snakemake workflow/run.sh --cores all

# A worker a core (pytest-xdist), each test file on one worker so that a module's fixture (a SLURM cluster, a
# workflow run) starts once; plain `pytest` runs the same tests one after another.
test: $(BIN)/.installed
	$(BIN)/python -m pytest -n auto --dist loadfile

lint: $(BIN)/.installed
	$(BIN)/ruff check src tests benchmarks workflow/scripts
	$(BIN)/ruff format --check src tests benchmarks workflow/scripts
	$(BIN)/snakefmt --check workflow/
	$(BIN)/snakemake --lint

# The generated blocks of README.md, docs/*.md, benchmarks/README.md and config/README.md, from the recorded runs.
readme: $(BIN)/.installed
	$(BIN)/python -m enkcvs.runs readme

# Run a config, timed, and record its report with provenance: make record NAME=default CONFIG=config/config.yaml
# [PROFILE=profiles/gpu-node] (into results/recorded/NAME, with the snakemake on PATH; the profile sets cores and GPU
# jobs; a run killed or stopped at a time limit goes on when the same command is given again)
record: $(BIN)/.installed
	$(BIN)/python -m enkcvs.runs run --name $(NAME) --configfile $(CONFIG) $(if $(PROFILE),--profile $(PROFILE))

# The K = 10, M = 5 cells of the full-MNIST row (config/experiments/cells/), recorded in order at one commit, each as
# results/recorded/mnist-k10-<file stem>: make record-cells [PROFILE=profiles/gpu-node] [DRY_RUN=1] (DRY_RUN: Snakemake's
# dry run of every cell, its jobs and expected time; nothing trains)
record-cells: $(BIN)/.installed
	$(BIN)/python -m enkcvs.runs cells $(if $(PROFILE),--profile $(PROFILE)) $(if $(DRY_RUN),--dry-run)

# The GPU check (benchmarks/gpu_check.py), on a GPU node: its parts one by one, each JSON written as the part ends
# into benchmarks/results/gpu-check-DATE/; `make gpu-check BUDGET=SECONDS` skips the parts that would not fit.
BUDGET ?= 300

gpu-check: $(BIN)/.installed
	$(BIN)/python benchmarks/gpu_check.py --out-dir benchmarks/results/gpu-check-$(shell date -u +%Y-%m-%d) \
		--budget-seconds $(BUDGET)

# For nodes without internet (docs/running.md): `make wheelhouse`, on a machine with internet and the nodes' Python
# and platform (a login node), puts a wheel of every package both locks pin into WHEELHOUSE (built where a package is
# published as source only), with the build backend of the editable install, each download checked against the
# lock's hashes; `make install-offline` on the node installs from that folder alone, requirements.lock by its pins
# without their hashes (a wheel built here from a checked source has a hash of its own).
WHEELHOUSE ?= wheelhouse

wheelhouse:
	$(PYTHON) -m pip wheel --quiet --wheel-dir $(WHEELHOUSE) --require-hashes -r requirements.lock
	sed -e '/--hash=/d' -e 's/ \\$$//' requirements.lock > $(WHEELHOUSE)/requirements.txt
	$(PYTHON) -m pip wheel --quiet --wheel-dir $(WHEELHOUSE) --no-deps --require-hashes -r requirements-nodeps.lock
	$(PYTHON) -m pip download --quiet --dest $(WHEELHOUSE) $$($(PYTHON) -c "import tomllib; \
		print(*tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires'])")

OFFLINE = --quiet --no-cache-dir --no-index --find-links $(WHEELHOUSE)

install-offline:
	test -d $(WHEELHOUSE) || { echo "install-offline: no wheelhouse at $(WHEELHOUSE): make wheelhouse" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install $(OFFLINE) -r $(WHEELHOUSE)/requirements.txt
	$(BIN)/python -m pip install $(OFFLINE) --no-deps --require-hashes -r requirements-nodeps.lock
	$(BIN)/python -m pip install $(OFFLINE) --no-deps --editable .
	touch $(BIN)/.installed

clean:
	rm -rf results/data results/tokens results/noise results/folds results/stacks results/selection results/final \
		results/comparison \
		results/issues results/oof results/report results/benchmarks logs
