"""Which kernel the VM boots (a pinned default, --vm-kernel), and the kernel cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from airtcp import kernels
from airtcp.errors import BackendError


def kernel(tmp_path: Path, release: str, origin: str = "installed", headers: bool = True) -> kernels.Kernel:
    build = tmp_path / release / "build"
    if headers:
        build.mkdir(parents=True)
    return kernels.Kernel(release, tmp_path / f"vmlinuz-{release}", build, origin)


@pytest.fixture
def pool(tmp_path: Path) -> list[kernels.Kernel]:
    return [
        kernel(tmp_path, "6.1.0-9-amd64"),
        kernel(tmp_path, "6.1.0-56-amd64"),
        kernel(tmp_path, "6.12.117+deb12-amd64", "cached"),
        kernel(tmp_path, "6.12.111+deb12-amd64", "cached"),
    ]


def test_the_default_is_the_newest_6_1_even_with_a_newer_kernel_present(pool: list[kernels.Kernel]) -> None:
    assert kernels.resolve(None, pool).release == "6.1.0-56-amd64"


@pytest.mark.parametrize(
    ("name", "release"),
    [
        ("6.1", "6.1.0-56-amd64"),
        ("6.12", "6.12.117+deb12-amd64"),
        ("6.12.111+deb12-amd64", "6.12.111+deb12-amd64"),
        ("6.1.0-9-amd64", "6.1.0-9-amd64"),
    ],
)
def test_a_series_picks_its_newest_release_and_a_release_itself(
    pool: list[kernels.Kernel], name: str, release: str
) -> None:
    assert kernels.resolve(name, pool).release == release


def test_a_missing_series_says_how_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match=r"no 6\.12 kernel.*available: 6\.1\.0-56-amd64.*airtcp kernels fetch 6\.12"):
        kernels.resolve("6.12", [kernel(tmp_path, "6.1.0-56-amd64")])


def test_a_missing_release_is_named(pool: list[kernels.Kernel]) -> None:
    with pytest.raises(BackendError, match=r"'6\.12\.1-nope-amd64'.*apt-get install linux-image-6\.12\.1-nope-amd64"):
        kernels.resolve("6.12.1-nope-amd64", pool)


def test_no_headers_names_the_package(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="apt-get install linux-headers-6.1.0-56-amd64"):
        kernels.resolve(None, [kernel(tmp_path, "6.1.0-56-amd64", headers=False)])


def test_installed_wins_over_cached_for_one_release(tmp_path: Path) -> None:
    both = [kernel(tmp_path / "a", "6.12.117+deb12-amd64", "cached"), kernel(tmp_path / "b", "6.12.117+deb12-amd64")]
    assert [k.origin for k in kernels.available(both)] == ["cached"]
    assert [k.origin for k in kernels.available(both[::-1])] == ["installed"]


@pytest.mark.parametrize(
    ("release", "series"),
    [("6.1.0-56-amd64", "6.1"), ("6.12.117+deb12-amd64", "6.12"), ("5.10.0-30-amd64", "5.10"), ("debug", "")],
)
def test_series_of(release: str, series: str) -> None:
    assert kernels.series_of(release) == series


def fake_unpacked_tree(tree: Path, release: str) -> None:
    """What dpkg-deb -x leaves of the four packages, as far as the links go."""
    abi = release.removesuffix("-amd64")
    moddir = tree / "lib" / "modules" / release
    moddir.mkdir(parents=True)
    (moddir / "build").symlink_to(f"/usr/src/linux-headers-{release}")
    (moddir / "source").symlink_to(f"/usr/src/linux-headers-{abi}-common")
    headers = tree / "usr" / "src" / f"linux-headers-{release}"
    headers.mkdir(parents=True)
    (headers / "Makefile").write_text(f"include /usr/src/linux-headers-{abi}-common/Makefile\n")
    (tree / "usr" / "src" / f"linux-headers-{abi}-common").mkdir()
    (tree / "boot").mkdir()
    (tree / "boot" / f"vmlinuz-{release}").write_bytes(b"")


def test_an_unpacked_tree_is_made_self_contained(tmp_path: Path) -> None:
    release = "6.12.117+deb12-amd64"
    tree = tmp_path / f"debian-{release}"
    fake_unpacked_tree(tree, release)
    kernels.make_self_contained(tree, release)
    moddir = tree / "lib" / "modules" / release
    headers = tree / "usr" / "src" / f"linux-headers-{release}"
    common = tree / "usr" / "src" / "linux-headers-6.12.117+deb12-common"
    assert moddir.joinpath("build").resolve() == headers
    assert moddir.joinpath("source").resolve() == common
    assert headers.joinpath("Makefile").read_text() == f"include {common}/Makefile\n"


def test_a_headers_makefile_of_another_form_is_refused(tmp_path: Path) -> None:
    release = "6.12.117+deb12-amd64"
    fake_unpacked_tree(tmp_path, release)
    (tmp_path / "usr" / "src" / f"linux-headers-{release}" / "Makefile").write_text("include elsewhere\n")
    with pytest.raises(BackendError, match="expected an include of /usr/src/linux-headers-6.12.117"):
        kernels.make_self_contained(tmp_path, release)


def test_only_stamped_trees_are_cached_kernels(tmp_path: Path) -> None:
    for release in ("6.12.117+deb12-amd64", "6.12.111+deb12-amd64"):
        fake_unpacked_tree(tmp_path / f"debian-{release}", release)
    (tmp_path / "debian-6.12.117+deb12-amd64" / kernels.STAMP).write_text("done\n")
    found = kernels.cached(tmp_path)
    assert [k.release for k in found] == ["6.12.117+deb12-amd64"]
    assert found[0].build_dir == tmp_path / "debian-6.12.117+deb12-amd64/usr/src/linux-headers-6.12.117+deb12-amd64"


def test_installed_needs_an_image_and_a_module_directory(tmp_path: Path) -> None:
    boot, modules = tmp_path / "boot", tmp_path / "modules"
    boot.mkdir()
    (modules / "6.1.0-56-amd64").mkdir(parents=True)
    (modules / "6.12.117+deb12-amd64").mkdir(parents=True)  # headers alone: no image
    (boot / "vmlinuz-6.1.0-56-amd64").write_bytes(b"")
    assert [k.release for k in kernels.installed(boot, modules)] == ["6.1.0-56-amd64"]


def test_the_packages_of_a_release() -> None:
    assert kernels.packages("6.12.117+deb12-amd64") == [
        "linux-image-6.12.117+deb12-amd64-unsigned",
        "linux-headers-6.12.117+deb12-amd64",
        "linux-headers-6.12.117+deb12-common",
        "linux-kbuild-6.12.117+deb12",
    ]


def test_fetch_refuses_an_untested_series(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match=r"expected one of 6\.1, 6\.12"):
        kernels.fetch("5.10", tmp_path)
