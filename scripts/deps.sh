#!/usr/bin/env bash
# Install what airtcp needs on Debian 12: apt packages and the .venv.
# Idempotent and quick when everything is present; needs root (or
# passwordless sudo) only when a Debian package is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=$(sed -e 's/#.*//' scripts/debian-packages.txt | xargs)
missing=()
for pkg in $packages; do
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$pkg")
	fi
done

if ((${#missing[@]})); then
	sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
			sudo=(sudo)
		else
			echo "make deps: need root or passwordless sudo to install: ${missing[*]}" >&2
			exit 1
		fi
	fi
	echo "make deps: installing Debian packages: ${missing[*]}"
	"${sudo[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
else
	echo "make deps: Debian packages: all $(wc -w <<<"$packages") present"
fi

if [ ! -x .venv/bin/python ]; then
	echo "make deps: creating .venv with Debian's python3"
	/usr/bin/python3 -m venv .venv
fi
stamp=.venv/.airtcp-requirements
want=$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	echo "make deps: installing Python packages into .venv (requirements.txt)"
	.venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
	# A worktree borrowing another checkout's .venv (a symlink) must not
	# re-point that checkout's editable install at itself: airtcp finds
	# the checkout it runs from anyway (Documentation/development.rst).
	if [ -L .venv ]; then
		echo "make deps: .venv is shared ($(readlink .venv)): its editable install stays where it is"
	else
		.venv/bin/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
		echo "$want" >"$stamp"
	fi
else
	echo "make deps: .venv up to date"
fi

# The second kernel the modules are built and tested on, unpacked into the
# kernel cache, never installed into /boot (testbed/airtcp/kernels.py).
if tree=$(PYTHONPATH=testbed .venv/bin/python -m airtcp.kernels fetch 6.12); then
	echo "make deps: VM kernel 6.12: $tree"
else
	echo "make deps: could not unpack the 6.12 kernel (above); airtcp kernels fetch 6.12 retries" >&2
	exit 1
fi
