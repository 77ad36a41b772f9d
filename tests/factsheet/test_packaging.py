"""The tool installs like any Python tool: a wheel (and an editable install) carries its templates and
published schemas, and `factsheet render` / `factsheet schema` work from a folder outside the checkout.

The fresh environments get their dependencies from the running interpreter's site-packages through a .pth
file (no copy, no download), and no pip or setuptools of their own: the running environment's pip installs
into them (`pip --python`), building with its setuptools when recent enough.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

pytestmark = pytest.mark.system

CODE_ROOTS = ("factsheet", "probes", "tuner")
FIXTURE = Path(__file__).parent / "fixtures" / "factsheet-1.0.0"


def _config(repo: Path) -> dict:
    return tomllib.loads((repo / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_folder_is_listed(repo):
    """pyproject lists packages by hand (mapped folders defeat packages.find): none may be forgotten."""
    config = _config(repo)
    found = {
        ".".join(init.parent.relative_to(repo).parts)
        for root in CODE_ROOTS
        for init in (repo / root).rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    mapped = set(config["package-dir"])
    # every subfolder of a mapped data folder is a package too (setuptools deprecates, and would one day
    # leave out, a folder of package data absent from `packages`)
    found |= {
        ".".join((name, *sub.relative_to(repo / folder).parts))
        for name, folder in config["package-dir"].items()
        for sub in (repo / folder).rglob("*")
        if sub.is_dir() and "__pycache__" not in sub.parts
    }
    listed = set(config["packages"])
    assert not found - listed, (
        f"add to [tool.setuptools] packages in pyproject.toml: {sorted(found - listed)}"
    )
    assert not (listed - mapped) - found, (
        f"listed but not a package folder: {sorted((listed - mapped) - found)}"
    )
    for name, folder in config["package-dir"].items():
        assert (repo / folder / "__init__.py").is_file(), f"{folder}/ needs an __init__.py to be {name}"


def _version(repo: Path) -> str:
    return tomllib.loads((repo / "pyproject.toml").read_text())["project"]["version"]


def _source_copy(repo: Path, dest: Path) -> Path:
    """The files a fresh clone has (tracked, plus new files not ignored), copied: the build writes nothing
    into the checkout."""
    listed = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for rel in filter(None, (p.decode() for p in listed)):
        src = repo / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def _fresh_venv(path: Path) -> Path:
    """A venv without pip or setuptools whose dependencies are the running environment's packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    purelib = Path(
        sysconfig.get_path("purelib", vars={"base": str(path), "platbase": str(path)})
    )  # the new venv's site-packages
    deps = [p for p in (*site.getsitepackages(), sysconfig.get_path("purelib")) if Path(p).is_dir()]
    (purelib / "_deps.pth").write_text("\n".join(dict.fromkeys(deps)) + "\n")
    return path / "bin"


def _build_isolation(repo: Path) -> list[str]:
    """Build offline with this environment's setuptools when it meets pyproject's build requirement; else
    let pip fetch one into an isolated build environment (a fresh CI venv has Python's bundled 65.x; CI has
    PyPI)."""
    (requirement,) = tomllib.loads((repo / "pyproject.toml").read_text())["build-system"]["requires"]
    needed = int(re.fullmatch(r"setuptools>=(\d+)", requirement)[1])
    try:
        have = int(metadata.version("setuptools").split(".")[0])
    except metadata.PackageNotFoundError:
        return []
    return ["--no-build-isolation"] if have >= needed else []


def _pip(python: Path, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", *args],
        check=True,
        timeout=600,
    )


def _run(bindir: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(bindir / "factsheet"), *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env
    )


def _check_installed_tool(bindir: Path, workdir: Path, expected_version: str) -> str:
    """From a folder outside the checkout: --version, schema, validate and render of the 1.0.0 fixture."""
    workdir.mkdir()
    where = subprocess.run(
        [
            str(bindir / "python"),
            "-c",
            "import factsheet, factsheet.templates as t; print(factsheet.__file__)",
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    version = _run(bindir, ["--version"], workdir)
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"llm-factsheet {expected_version}"  # from the installed metadata
    schema = _run(bindir, ["schema"], workdir)
    assert schema.returncode == 0, schema.stderr
    assert any("factsheet" in name for name in json.loads(schema.stdout))
    sheet = workdir / "sheet"
    shutil.copytree(FIXTURE, sheet)
    validated = _run(bindir, ["validate", str(sheet / "factsheet.json")], workdir)
    assert validated.returncode == 0, validated.stdout + validated.stderr  # digests and re-derivation
    rendered = _run(bindir, ["render", str(sheet / "factsheet.json"), "-o", str(workdir / "out")], workdir)
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    html = (workdir / "out" / "factsheet.html").read_text()
    assert "LLM system factsheet" in html and "<style>" in html  # template and CSS both found
    assert (workdir / "out" / "factsheet.pdf").read_bytes().startswith(b"%PDF")
    return where


@pytest.mark.slow
def test_wheel_installs_and_runs_outside_the_checkout(repo, tmp_path):
    src = _source_copy(repo, tmp_path / "src")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *_build_isolation(repo), "-w",
         str(tmp_path / "dist"), str(src)],
        check=True,
        timeout=600,
    )  # fmt: skip
    (wheel,) = (tmp_path / "dist").glob("llm_factsheet-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    config = _config(repo)
    for package, folder in config["package-dir"].items():
        for f in (repo / folder).rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts:
                rel = "/".join((*package.split("."), *f.relative_to(repo / folder).parts))
                assert rel in names, f"{folder}/{f.relative_to(repo / folder)} is not in the wheel"
    bindir = _fresh_venv(tmp_path / "venv")
    _pip(bindir / "python", str(wheel))
    where = _check_installed_tool(bindir, tmp_path / "elsewhere", _version(repo))
    assert str(tmp_path / "venv") in where, f"imported {where}, not the installed wheel"


@pytest.mark.slow
def test_editable_install_finds_the_mapped_folders(repo, tmp_path):
    src = _source_copy(repo, tmp_path / "src")
    bindir = _fresh_venv(tmp_path / "venv")
    _pip(bindir / "python", *_build_isolation(repo), "-e", str(src))
    where = _check_installed_tool(bindir, tmp_path / "elsewhere", _version(repo))
    assert str(src) in where, f"imported {where}, not the editable checkout"
