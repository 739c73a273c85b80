#!/bin/sh
# The version of airtcp, the one string every part reports (airtcp
# --version, result files, pyproject, pepd/arqd --version, the modules'
# MODULE_VERSION).  From git, else from what a release tarball carries:
#
#   1. $AIRTCP_VERSION, if set (a packager's override; the testbed passes it
#      into the VM, whose guest need not run git);
#   2. git: the newest release tag vX.Y.Z reachable from HEAD, as
#      "X.Y.Z" on the tag itself, "X.Y.Z.postN+gHASH" N commits later,
#      ".dirty" appended to the local part with uncommitted changes;
#      "0.0.0.postN+gHASH" while no release is tagged (N = every commit);
#   3. the file VERSION at the top of the tree, which `git archive` fills
#      in (.gitattributes: export-subst) with git describe and the commit:
#      "X.Y.Z" or "X.Y.Z.postN+gHASH" as above, "0.0.0+gHASH" untagged;
#   4. "unknown".
#
# The form is a valid PEP 440 version (pip) and a valid Debian upstream
# version, so that packaging can use it as it is.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)

if [ -n "${AIRTCP_VERSION:-}" ]; then
	printf '%s\n' "$AIRTCP_VERSION"
	exit 0
fi

# "vX.Y.Z-N-gHASH[-dirty]" (git describe --long) -> the form above.
from_describe() {
	sed -E \
		-e 's/^v//' \
		-e 's/^([0-9][0-9.]*)-0-g[0-9a-f]+$/\1/' \
		-e 's/^([0-9][0-9.]*)-0-(g[0-9a-f]+)-dirty$/\1+\2.dirty/' \
		-e 's/^([0-9][0-9.]*)-([0-9]+)-(g[0-9a-f]+)$/\1.post\2+\3/' \
		-e 's/^([0-9][0-9.]*)-([0-9]+)-(g[0-9a-f]+)-dirty$/\1.post\2+\3.dirty/'
}

if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
	[ "$(git -C "$root" rev-parse --show-toplevel)" = "$(cd "$root" && pwd -P)" ]; then
	if described=$(git -C "$root" describe --tags --long --dirty --abbrev=7 --match 'v[0-9]*' 2>/dev/null); then
		printf '%s\n' "$described" | from_describe
	else
		count=$(git -C "$root" rev-list --count HEAD)
		hash=$(git -C "$root" rev-parse --short=7 HEAD)
		git -C "$root" update-index -q --refresh >/dev/null 2>&1 || true
		dirty=$(git -C "$root" diff-index --quiet HEAD -- 2>/dev/null || echo .dirty)
		printf '0.0.0.post%s+g%s%s\n' "$count" "$hash" "$dirty"
	fi
	exit 0
fi

# "DESCRIBE|HASH": describe is empty where no release tag is reachable.
if [ -f "$root/VERSION" ]; then
	stamp=$(cat "$root/VERSION")
	case "$stamp" in
	*'$Format'* | '') ;; # not an archive: git archive did not fill it in
	'|'*)
		printf '0.0.0+g%s\n' "${stamp#|}"
		exit 0
		;;
	*)
		printf '%s\n' "${stamp%%|*}" | from_describe
		exit 0
		;;
	esac
fi

echo unknown
