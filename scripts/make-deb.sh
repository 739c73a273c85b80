#!/bin/sh
# make deb: the Debian packages airtcp-pepd and airtcp-dkms, built by
# dpkg-buildpackage from a copy of this tree as it is (tracked files and
# new ones git would add) with packaging/debian as debian/, then checked
# by lintian (an error or warning fails; overrides are justified in
# packaging/debian/*.lintian-overrides and Documentation/deploy.rst).
#
#   scripts/make-deb.sh [OUTDIR]     default: build/deb; the .debs land there
#
# The version is scripts/version.sh's (git describe: X.Y.Z on a release
# tag, X.Y.Z.postN+gHASH after it, .dirty with uncommitted changes), a
# valid native Debian version.  Maintainer: DEBFULLNAME and DEBEMAIL,
# else git's user.name and user.email, else the last commit's author.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$root/build/deb}")
version=$("$root/scripts/version.sh")
case $version in
unknown | '')
	echo "make deb: no version (scripts/version.sh printed '$version'): build from a git checkout" >&2
	exit 1
	;;
esac
name=${DEBFULLNAME:-$(git -C "$root" config user.name || git -C "$root" log -1 --format=%an)}
email=${DEBEMAIL:-$(git -C "$root" config user.email || git -C "$root" log -1 --format=%ae)}
if [ -z "$name" ] || [ -z "$email" ]; then
	echo "make deb: set DEBFULLNAME and DEBEMAIL (or git's user.name and user.email) for the Maintainer field" >&2
	exit 1
fi
maintainer="$name <$email>"

src=$out/airtcp-$version
rm -rf "$out"
mkdir -p "$src"
# A file git still tracks but the tree has deleted is left out.
# shellcheck disable=SC2016 # $f is the inner shell's
(cd "$root" && git ls-files -z --cached --others --exclude-standard) |
	(cd "$root" && xargs -0 sh -c 'for f; do if [ -e "$f" ]; then printf "%s\0" "$f"; fi; done' sh) |
	(cd "$root" && xargs -0 cp --parents -t "$src")
rm -rf "$src/debian"
cp -r "$root/packaging/debian" "$src/debian"
sed -i "s|@MAINTAINER@|$maintainer|" "$src/debian/control"
case $version in
*.dirty) date=$(date -R) ;;
*) date=$(git -C "$root" log -1 --format=%aD) ;;
esac
cat >"$src/debian/changelog" <<CHANGELOG
airtcp ($version) unstable; urgency=medium

  * Built by make deb from $(git -C "$root" describe --always --dirty --tags).

 -- $maintainer  $date
CHANGELOG

echo "make deb: airtcp $version in $src"
(cd "$src" && nice -n 10 dpkg-buildpackage --build=binary --no-sign) >"$out/build.log" 2>&1 || {
	tail -30 "$out/build.log" >&2
	echo "make deb: dpkg-buildpackage failed; the whole log: $out/build.log" >&2
	exit 1
}
changes=$out/airtcp_${version}_$(dpkg --print-architecture).changes
status=0
lintian --fail-on error,warning --info "$changes" >"$out/lintian.log" 2>&1 || status=$?
cat "$out/lintian.log"
if [ "$status" -ne 0 ]; then
	echo "make deb: lintian found errors or warnings (above): fix them, or override with a reason" >&2
	exit 1
fi
ls "$out"/*.deb
