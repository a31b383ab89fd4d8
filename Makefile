# `make run` and `make test` set everything up on a fresh machine (Python >= 3.11) and run.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint readme record carry restore clean gpu-wheels gpu-site gpu-check gpu-fit gpu-sitting gpu-lease

$(BIN)/.installed: requirements.lock requirements-nodeps.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --no-cache-dir --upgrade pip
	$(BIN)/python -m pip install --quiet --no-cache-dir -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-cache-dir --no-deps --require-hashes -r requirements-nodeps.lock
	$(BIN)/python -m pip install --quiet --no-cache-dir --no-deps --editable .
	touch $@

run: $(BIN)/.installed
	SNAKEMAKE=$(BIN)/snakemake workflow/run.sh --cores all

test: $(BIN)/.installed
	$(BIN)/python -m pytest

lint: $(BIN)/.installed
	$(BIN)/snakemake --lint

# The generated blocks of README.md, docs/*.md, benchmarks/README.md and config/README.md, from the recorded runs.
readme: $(BIN)/.installed
	$(BIN)/python -m enkcvs.runs.recorded readme

# Run a config, timed, and record its report with provenance: make record NAME=default CONFIG=config/config.yaml
# (ROOT=benchmarks/results/runs for a speed comparison; default results/recorded)
record: $(BIN)/.installed
	$(BIN)/python -m enkcvs.runs.recorded run --name $(NAME) --configfile $(CONFIG) $(if $(ROOT),--root $(ROOT))

# Move an unfinished recorded run to another machine through git (docs/reproducibility.md): save what it has
# finished into results/carried/NAME (commit it), then on the other machine restore it and `make record` again.
carry: $(BIN)/.installed
	$(BIN)/python -m enkcvs.runs.recorded carry --name $(NAME) --configfile $(CONFIG)

restore: $(BIN)/.installed
	$(BIN)/python -m enkcvs.runs.recorded restore --name $(NAME) --configfile $(CONFIG)

# The GPU check, on a lent GPU machine (benchmarks/README.md, the GPU check): its python3 has PyTorch; the
# workflow's other packages travel as wheels that `make gpu-wheels` downloads here into .whl/.
GPU_PYTHON ?= python3
GPU_WHEELS := $(shell grep -v '^\#' benchmarks/gpu-wheels.txt | paste -sd'|')

gpu-wheels:
	mkdir -p .whl
	for pin in $$(grep -hiE '^($(GPU_WHEELS))==' requirements.lock requirements-nodeps.lock | sed 's/ .*//'); do \
		$(PYTHON) -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
			--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
			-d .whl $$pin 2>/dev/null || $(PYTHON) -m pip wheel --quiet --no-deps -w .whl $$pin || exit 1; \
	done  # a package published as source only is pure Python here: built into a wheel

gpu-site:
	if [ -d .whl ]; then $(GPU_PYTHON) -m pip install --quiet --no-index --no-deps --no-compile --no-cache-dir \
		--upgrade --target /tmp/site .whl/*.whl; fi

GPU_PATH = PYTHONPATH=$(CURDIR)/src:/tmp/site$${PYTHONPATH:+:$$PYTHONPATH} PATH=/tmp/site/bin:$$PATH
GPU_CHECK_JSON := benchmarks/results/gpu-check-$(shell date -u +%Y-%m-%d).json
GPU_CHECK = $(GPU_PATH) $(GPU_PYTHON) benchmarks/gpu_check.py --out $(GPU_CHECK_JSON)

gpu-check: gpu-site
	$(GPU_CHECK)

# Carried records go on for at most TRAIN_SECONDS (src/enkcvs/runs/sitting.py), JOBS training jobs side by side on
# the GPU: make gpu-sitting RUNS="NAME=CONFIG ..." PACK=$$OUT, with ENKCVS_GIT_COMMIT=<the commit> (the copy there
# has no .git). Each comes back as PACK/NAME.tar.gz, in volumes NAME.tar.gz.1, .2, ... of MAX_ARCHIVE_MIB where
# larger (a carried run without its epoch checkpoints where PACK would exceed MAX_PACK_MIB or MAX_PACK_FILES: what
# the machine gives back), put back here with `python -m enkcvs.runs.sitting --unpack ARCHIVE ...`.
TRAIN_SECONDS ?= 300
JOBS ?= 8
MAX_ARCHIVE_MIB ?= 16
MAX_PACK_MIB ?= 60
MAX_PACK_FILES ?= 8
SITTING = $(GPU_PATH) $(GPU_PYTHON) -m enkcvs.runs.sitting $(foreach run,$(RUNS),--run $(subst =, ,$(run))) \
	--cores $(JOBS) --pack $(PACK) --max-archive-mib $(MAX_ARCHIVE_MIB) --max-pack-mib $(MAX_PACK_MIB) \
	--max-pack-files $(MAX_PACK_FILES)

# Here, before a device call: what it is sent (the checkout and .whl) must stay within 64 MiB; the carried runs'
# epoch checkpoints are dropped from the working tree where it would not (`git checkout -- results/carried` after).
gpu-fit: $(BIN)/.installed
	$(BIN)/python -m enkcvs.runs.sitting --fit-send 64 --carry .whl

gpu-sitting: gpu-site
	$(SITTING) --seconds $(TRAIN_SECONDS)

# Both in one call of a lent machine (GPU_CALL_SECONDS in all, within its 10 minutes): the check, its JSON copied
# into PACK if it succeeded (never an older one of the same date), then the sitting with the seconds left, less 2
# minutes to carry and pack.
GPU_CALL_SECONDS ?= 540
gpu-lease: gpu-site
	start=$$(date +%s); if $(GPU_CHECK); then cp $(GPU_CHECK_JSON) $(PACK)/; \
	else echo "gpu-lease: the check failed; the sitting goes on"; fi; \
	left=$$(( $(GPU_CALL_SECONDS) - 120 - $$(date +%s) + start )); \
	if [ $$left -gt 60 ]; then $(SITTING) --seconds $$left; else echo "gpu-lease: only $$left s left for the sitting"; fi

clean:
	rm -rf results/data results/tokens results/noise results/folds results/selection results/final results/comparison \
		results/issues results/oof results/report results/benchmarks logs
