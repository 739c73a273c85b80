# airtcp: TCP over lossy wireless links.
#
#   make run    build everything, run stock against the recommended schemes (README)
#   make test   every unit test, then the integration tests (in the VM here)
#
# Both do their own set-up through `make deps`.  V=1 shows every command.

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
AIRTCP := $(VENV)/bin/airtcp
PYTEST := $(PY) -m pytest

# The one version of every part (scripts/version.sh: git, else a tarball's VERSION).
AIRTCP_VERSION := $(shell scripts/version.sh)

# The kernel modules are built for: the VM's kernel on the vm backend,
# the running one on a native host (airtcp decides, and says why).
KVER ?= $(shell $(AIRTCP) backend --kernel-release 2>/dev/null || uname -r)
# Its headers: installed, or unpacked in the VM kernel cache (`airtcp kernels`).
KDIR ?= $(shell $(AIRTCP) kernels path $(KVER) 2>/dev/null || echo /lib/modules/$(KVER)/build)

ifeq ($(V),1)
Q :=
else
Q := @
endif

.PHONY: help deps build run test unit host-test integration lint bench man install uninstall deb test-packages clean distclean

help:
	@echo "make deps         install Debian packages and .venv (idempotent)"
	@echo "make run          build and run the default experiment: table, verdicts, plot in results/"
	@echo "make test         lint, unit tests, host tests, then integration tests (VM unless native)"
	@echo "make unit         unit tests only (no root, no VM)"
	@echo "make host-test    tests on this machine's kernel (root: namespaces, NFQUEUE), no VM"
	@echo "make integration  integration tests only"
	@echo "                  (SANITIZE=1: host and integration tests with pepd and arqd under ASan/UBSan)"
	@echo "make lint         ruff + mypy + reST check (and the C/kernel style checks of each part)"
	@echo "make bench        benchmarks: figures and ratios against a baseline of the same run"
	@echo "make man          the man pages pepd(8), arqd(8), airtcp(1) into build/man/"
	@echo "make install      pepd, arqd, units, configs, man pages, docs (DESTDIR, PREFIX=/usr/local)"
	@echo "make uninstall    remove what install wrote (a changed config stays unless PURGE=1)"
	@echo "make deb          Debian packages airtcp-pepd and airtcp-dkms into build/deb/"
	@echo "make test-packages install, use and remove those packages in the VM (about 20 min)"
	@echo "make debug-kernel build the VM's debug kernel (KASAN, kmemleak, lockdep), cached per machine"
	@echo "make stress       the modules' stress suite on the debug kernel, failing on any kernel report"
	@echo "make clean        remove build outputs; \`airtcp clean\` removes test leftovers"

deps:
	$(Q)scripts/deps.sh

build: deps
	$(Q)$(MAKE) -s -C testbed/timeloss
	$(Q)$(MAKE) -s -C testbed/medium
ifneq ($(wildcard pep-daemon/Makefile),)
	$(Q)$(MAKE) -s -C pep-daemon AIRTCP_VERSION=$(AIRTCP_VERSION)
endif
ifneq ($(wildcard kmod/Makefile),)
	$(Q)$(MAKE) -s -C kmod KVER=$(KVER) KDIR=$(KDIR) AIRTCP_VERSION=$(AIRTCP_VERSION)
endif

run: build
	$(Q)$(AIRTCP) run $(RUN_ARGS)

test: lint unit host-test integration

# SANITIZE=1: the host and integration tests run pepd and arqd built with ASan and UBSan
# (pep-daemon/build-san); a test after which one of them reported anything fails.
ifeq ($(SANITIZE),1)
SAN_ENV := AIRTCP_PEPD=$(CURDIR)/pep-daemon/build-san/pepd AIRTCP_ARQD=$(CURDIR)/pep-daemon/build-san/arqd
SAN_BUILD := sanitize-build
endif
.PHONY: sanitize-build
sanitize-build: deps
	$(Q)$(MAKE) -s -C pep-daemon SANITIZE=1 AIRTCP_VERSION=$(AIRTCP_VERSION)

unit: build
	$(Q)$(PYTEST) tests/unit -q

# pepd's netfilter, checksum, instance and flood tests on this machine's own
# kernel (namespaces, NFQUEUE through iptables-legacy; root), no VM: fast.
host-test: build $(SAN_BUILD)
	$(Q)$(SAN_ENV) $(PYTEST) tests/host -v -p no:cacheprovider $(PYTEST_ARGS)

# Tests boot the VM with all vCPUs on one host thread: QEMU 7.2's
# multi-threaded emulation now and then crashes a kernel that patches its own
# code (Documentation/deploy.rst, "Kernels"), and a crashed VM is a red run.
AIRTCP_VM_TCG ?= single
VM_TEST_ENV := AIRTCP_VM_TCG=$(AIRTCP_VM_TCG)

integration: build $(SAN_BUILD)
	$(Q)$(VM_TEST_ENV) $(SAN_ENV) $(AIRTCP) exec -- $(PY) -m pytest tests/integration -v -p no:cacheprovider --durations=15 $(PYTEST_ARGS)

lint: deps
	$(Q)$(VENV)/bin/ruff check testbed tests pep-daemon scripts/check-docs.py scripts/knobs.py
	$(Q)$(VENV)/bin/ruff format --check testbed tests pep-daemon scripts/check-docs.py scripts/knobs.py
	$(Q)$(VENV)/bin/mypy --no-error-summary
	$(Q)$(VENV)/bin/mypy --strict --no-error-summary scripts/knobs.py
	$(Q)$(VENV)/bin/python scripts/check-docs.py Documentation/*.rst Documentation/eval/*.rst Documentation/man/*.rst pep-daemon/README.rst kmod/README.rst
ifneq ($(wildcard kmod/Makefile),)
	$(Q)$(MAKE) -s -C kmod check KVER=$(KVER) KDIR=$(KDIR)
endif

# Each part adds its benchmark target here (BENCHES += bench-<part>).
BENCHES :=
BENCHES += bench-pepd

# tcp_ddack: throughput with the hook enabled / disabled, veth and loopback.
BENCHES += bench-ddack
.PHONY: bench-ddack
bench-ddack: build
	$(Q)$(AIRTCP) exec -- $(PY) tests/bench/ddack_hook.py

# The wifi link: the highest rate it sustains here, the medium's CPU, against netem at the same rate.
BENCHES += bench-wifi
.PHONY: bench-wifi
bench-wifi: build
	$(Q)$(AIRTCP) exec -- $(PY) tests/bench/wifi_rate.py

bench: build
	$(Q)if [ -z "$(strip $(BENCHES))" ]; then echo "make bench: no benchmarks defined yet"; fi
	$(Q)set -e; for target in $(BENCHES); do $(MAKE) -s $$target; done

# pepd: its filters alone, then NFQUEUE forwarding against plain forwarding
# on this host's kernel (namespaces, no netem; needs root), with this
# checkout's airtcp and pepd.
.PHONY: bench-pepd
bench-pepd: build
	$(Q)$(MAKE) -s -C pep-daemon bench
	$(Q)AIRTCP_ROOT=$(CURDIR) PYTHONPATH=$(CURDIR)/testbed $(PY) tests/bench/pepd_forwarding.py

# pepd under floods (SYNs, mid-stream data, tiny segments; 100k packets each):
# the bulk flow's goodput, pepd's peak memory against its bound, what it refused.
BENCHES += bench-pepd-flood
.PHONY: bench-pepd-flood
bench-pepd-flood: build
	$(Q)AIRTCP_ROOT=$(CURDIR) PYTHONPATH=$(CURDIR)/testbed:$(CURDIR) $(PY) tests/bench/pepd_flood.py $(FLOOD_ARGS)

# ---------------------------------------------------------------- install

# GNU-style directories (pep-daemon/Makefile has the daemons' own: SBINDIR,
# SYSCONFDIR=/etc, UNITDIR); a packager sets PREFIX=/usr and DESTDIR.
# Neither needs the virtualenv: a package build has none and takes
# rst2man from python3-docutils.
PREFIX ?= /usr/local
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/airtcp
INSTALL ?= install
RST2MAN ?= $(firstword $(wildcard $(VENV)/bin/rst2man) rst2man)
MAN_PAGES := build/man/pepd.8 build/man/arqd.8 build/man/airtcp.1
# The operator's documentation installed with the daemons (the units name them).
INSTALL_DOCS := Documentation/deploy.rst Documentation/pepd.rst Documentation/arq.rst

# Man pages from their reST sources (Documentation/man/); the daemons'
# OPTIONS come from their key tables (`make -C pep-daemon knobs`), the
# version from scripts/version.sh.  --strict: a docutils warning fails.
man: $(MAN_PAGES)

build/version.stamp: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)echo '$(AIRTCP_VERSION)' | cmp -s - $@ || echo '$(AIRTCP_VERSION)' > $@

build/man/%: Documentation/man/%.rst build/version.stamp
	$(Q)mkdir -p $(@D)
	$(Q)sed 's/@VERSION@/$(AIRTCP_VERSION)/' $< | $(RST2MAN) --strict - $@.tmp
	$(Q)mv $@.tmp $@

install: man
	$(Q)$(MAKE) -s -C pep-daemon install AIRTCP_VERSION=$(AIRTCP_VERSION) PREFIX=$(PREFIX) DOCDIR=$(DOCDIR)
	$(Q)$(INSTALL) -d $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(DOCDIR)
	$(Q)$(INSTALL) -m 0644 build/man/pepd.8 build/man/arqd.8 $(DESTDIR)$(MANDIR)/man8/
	$(Q)$(INSTALL) -m 0644 build/man/airtcp.1 $(DESTDIR)$(MANDIR)/man1/
	$(Q)$(INSTALL) -m 0644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/

uninstall:
	$(Q)$(MAKE) -s -C pep-daemon uninstall PREFIX=$(PREFIX) DOCDIR=$(DOCDIR)
	$(Q)rm -f $(DESTDIR)$(MANDIR)/man8/pepd.8 $(DESTDIR)$(MANDIR)/man8/arqd.8 $(DESTDIR)$(MANDIR)/man1/airtcp.1 \
		$(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(INSTALL_DOCS)))
	$(Q)if [ -d $(DESTDIR)$(DOCDIR) ]; then rmdir --ignore-fail-on-non-empty $(DESTDIR)$(DOCDIR); fi

# Debian packages airtcp-pepd and airtcp-dkms (packaging/debian), lintian-checked.
deb:
	$(Q)scripts/make-deb.sh

# The packages installed, used and removed in the VM (tests/integration/test_packages.py).
# Not in `make test`: DKMS alone takes about 13 minutes under software emulation.
test-packages: deb build
	$(Q)$(VM_TEST_ENV) AIRTCP_DEBS=$(CURDIR)/build/deb $(AIRTCP) exec -- $(PY) -m pytest tests/integration/test_packages.py \
		-v -s -p no:cacheprovider $(PYTEST_ARGS)

.PHONY: FORCE
FORCE:

# The debug kernel and the stress suite (Documentation/debug-kernel.rst).
# The kernel is built once per machine into /var/lib/airtcp/kernels
# (26.6 min here on 2 cores) and rebuilt only when its inputs change.
DEBUG_KERNEL := PYTHONPATH=testbed $(PY) -m airtcp.debugkernel
STRESS_MEMORY ?= 3G
# The suite's lengths (Documentation/debug-kernel.rst), passed into the VM.
STRESS_CYCLES ?= 100
STRESS_ROUNDS ?= 10
STRESS_LONG_S ?= 300
STRESS_QUEUE_S ?= 60
.PHONY: debug-kernel debug-kernel-clean stress
debug-kernel: deps
	$(Q)$(DEBUG_KERNEL) build

debug-kernel-clean:
	$(Q)$(DEBUG_KERNEL) clean --all

stress: debug-kernel
	$(Q)$(MAKE) -s -C tests/stress/bugs KDIR=$$($(DEBUG_KERNEL) path)
	$(Q)$(VM_TEST_ENV) $(AIRTCP) exec --vm-kernel debug --vm-memory $(STRESS_MEMORY) -- \
		env AIRTCP_STRESS_CYCLES=$(STRESS_CYCLES) AIRTCP_STRESS_ROUNDS=$(STRESS_ROUNDS) \
		AIRTCP_STRESS_LONG_S=$(STRESS_LONG_S) AIRTCP_STRESS_QUEUE_S=$(STRESS_QUEUE_S) \
		$(PY) -m pytest tests/stress -v -p no:cacheprovider $(PYTEST_ARGS)

clean:
	$(Q)rm -rf build
	$(Q)$(MAKE) -s -C testbed/timeloss clean
	$(Q)$(MAKE) -s -C testbed/medium clean
ifneq ($(wildcard pep-daemon/Makefile),)
	$(Q)$(MAKE) -s -C pep-daemon clean
endif
ifneq ($(wildcard kmod/Makefile),)
	$(Q)$(MAKE) -s -C kmod clean
endif
	$(Q)find . -name __pycache__ -prune -exec rm -rf {} +

distclean: clean
	$(Q)rm -rf $(VENV) results
