# `make run` and `make test` set everything up on a fresh machine (Python >= 3.11) and run.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint readme record carry restore clean

$(BIN)/.installed: requirements.lock requirements-nodeps.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps --require-hashes -r requirements-nodeps.lock
	$(BIN)/python -m pip install --quiet --no-deps --editable .
	touch $@

run: $(BIN)/.installed
	SNAKEMAKE=$(BIN)/snakemake workflow/run.sh --cores all

test: $(BIN)/.installed
	$(BIN)/python -m pytest

lint: $(BIN)/.installed
	$(BIN)/snakemake --lint

# The generated blocks of README.md, docs/*.md and benchmarks/README.md, from the recorded runs (never typed by hand).
readme: $(BIN)/.installed
	$(BIN)/python -m enkcvs.recorded readme

# Run a config, timed, and record its report with provenance: make record NAME=default CONFIG=config/config.yaml
# (ROOT=benchmarks/results/runs for a speed comparison; default results/recorded)
record: $(BIN)/.installed
	$(BIN)/python -m enkcvs.recorded run --name $(NAME) --configfile $(CONFIG) $(if $(ROOT),--root $(ROOT))

# Move an unfinished recorded run to another machine through git (docs/reproducibility.md): save what it has
# finished into results/carried/NAME (commit it), then on the other machine restore it and `make record` again.
carry: $(BIN)/.installed
	$(BIN)/python -m enkcvs.recorded carry --name $(NAME) --configfile $(CONFIG)

restore: $(BIN)/.installed
	$(BIN)/python -m enkcvs.recorded restore --name $(NAME) --configfile $(CONFIG)

clean:
	rm -rf results/data results/tokens results/noise results/folds results/selection results/final results/comparison \
		results/issues results/oof results/report results/benchmarks logs
