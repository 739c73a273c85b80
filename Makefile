# airtcp: TCP over lossy wireless links.
#
#   make run    build everything and run the default experiment (README)
#   make test   every unit test, then the integration tests (in the VM here)
#
# Both do their own set-up through `make deps`.  V=1 shows every command.

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
AIRTCP := $(VENV)/bin/airtcp
PYTEST := $(PY) -m pytest

# The kernel modules are built for: the VM's kernel on the vm backend,
# the running one on a native host (airtcp decides, and says why).
KVER ?= $(shell $(AIRTCP) backend --kernel-release 2>/dev/null || uname -r)

ifeq ($(V),1)
Q :=
else
Q := @
endif

SUBDIRS_BUILD := $(wildcard pep-daemon/Makefile kmod/Makefile)

.PHONY: help deps build run test unit integration lint bench clean distclean

help:
	@echo "make deps         install Debian packages and .venv (idempotent)"
	@echo "make run          build and run the default experiment; table + plot in results/"
	@echo "make test         lint, unit tests, then integration tests (VM unless native)"
	@echo "make unit         unit tests only (no root, no VM)"
	@echo "make integration  integration tests only"
	@echo "make lint         ruff + mypy + reST check (and the C/kernel style checks of each part)"
	@echo "make bench        benchmarks: figures and ratios against a baseline of the same run"
	@echo "make clean        remove build outputs; \`airtcp clean\` removes test leftovers"

deps:
	$(Q)scripts/deps.sh

build: deps
	$(Q)$(MAKE) -s -C testbed/timeloss
ifneq ($(wildcard pep-daemon/Makefile),)
	$(Q)$(MAKE) -s -C pep-daemon
endif
ifneq ($(wildcard kmod/Makefile),)
	$(Q)$(MAKE) -s -C kmod KVER=$(KVER)
endif

run: build
	$(Q)$(AIRTCP) run $(RUN_ARGS)

test: lint unit integration

unit: build
	$(Q)$(PYTEST) tests/unit -q

integration: build
	$(Q)$(AIRTCP) exec -- $(PY) -m pytest tests/integration -v -p no:cacheprovider $(PYTEST_ARGS)

lint: deps
	$(Q)$(VENV)/bin/ruff check testbed tests pep-daemon scripts/check-docs.py
	$(Q)$(VENV)/bin/ruff format --check testbed tests pep-daemon scripts/check-docs.py
	$(Q)$(VENV)/bin/mypy --no-error-summary
	$(Q)$(VENV)/bin/python scripts/check-docs.py Documentation/*.rst pep-daemon/README.rst kmod/README.rst
ifneq ($(wildcard kmod/Makefile),)
	$(Q)$(MAKE) -s -C kmod check
endif

# Each part adds its benchmark target here (BENCHES += bench-<part>).
BENCHES :=
BENCHES += bench-pepd

# tcp_ddack: throughput with the hook enabled / disabled, veth and loopback.
BENCHES += bench-ddack
.PHONY: bench-ddack
bench-ddack: build
	$(Q)$(AIRTCP) exec -- $(PY) tests/bench/ddack_hook.py

bench: build
	$(Q)if [ -z "$(strip $(BENCHES))" ]; then echo "make bench: no benchmarks defined yet"; fi
	$(Q)set -e; for target in $(BENCHES); do $(MAKE) -s $$target; done

# pepd: its filters alone, then NFQUEUE forwarding against plain forwarding
# on this host's kernel (namespaces, no netem; needs root).
.PHONY: bench-pepd
bench-pepd: build
	$(Q)$(MAKE) -s -C pep-daemon bench
	$(Q)$(PY) pep-daemon/bench/forwarding.py

clean:
	$(Q)$(MAKE) -s -C testbed/timeloss clean
ifneq ($(wildcard pep-daemon/Makefile),)
	$(Q)$(MAKE) -s -C pep-daemon clean
endif
ifneq ($(wildcard kmod/Makefile),)
	$(Q)$(MAKE) -s -C kmod clean
endif
	$(Q)find . -name __pycache__ -prune -exec rm -rf {} +

distclean: clean
	$(Q)rm -rf $(VENV) results
