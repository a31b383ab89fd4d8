# `make run` and `make test` set everything up on a fresh machine (Python >= 3.11) and run.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint clean

$(BIN)/.installed: requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps --editable .
	touch $@

run: $(BIN)/.installed
	SNAKEMAKE=$(BIN)/snakemake workflow/run.sh --cores all

test: $(BIN)/.installed
	$(BIN)/python -m pytest

lint: $(BIN)/.installed
	$(BIN)/snakemake --lint

clean:
	rm -rf results/data results/noise results/folds results/selection results/final results/report logs
