"""A clean first install: building the project prints no setuptools warning, and the wheel holds every
module and every shipped resource (batches, presets, icon) where the code looks for them.

The build runs on a copy of the sources in a temp folder (nothing lands in the work tree), offline and
without build isolation: it uses the setuptools of the test environment, as `pip install -e .` in the
README's venv does.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# A Python warning category (SetuptoolsDeprecationWarning, _Warning ...) or a distutils "warning:" line.
WARNING_RE = re.compile(r"Warning\b|^\s*warning:|is absent from|deprecated", re.IGNORECASE | re.MULTILINE)


def _copy_sources(dst: Path) -> Path:
    src = dst / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("explorer", "resources"):
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    return src


def _env() -> dict:
    env = dict(os.environ)
    # Byte-compiling switched off by the environment makes setuptools print "warning: ... skipping":
    # not the project's doing, so the build runs as on a user's machine.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PIP_NO_INPUT"] = "1"
    return env


def _build(tmp_path: Path, editable: bool) -> tuple[Path, str]:
    src = _copy_sources(tmp_path)
    out = tmp_path / "dist"
    out.mkdir()
    hook = "build_editable" if editable else "build_wheel"
    code = f"import sys; from setuptools import build_meta as b; print(b.{hook}(sys.argv[1]))"
    proc = subprocess.run([sys.executable, "-c", code, str(out)], cwd=src, env=_env(), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheels = list(out.glob("*.whl"))
    assert len(wheels) == 1, os.listdir(out)
    return wheels[0], proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("wheel"), editable=False)


def test_wheel_build_prints_no_warning(wheel):
    _, log = wheel
    hits = [ln.strip() for ln in log.splitlines() if WARNING_RE.search(ln)]
    assert not hits, "setuptools warned:\n" + "\n".join(hits[:10])


def test_editable_build_prints_no_warning(tmp_path):
    _, log = _build(tmp_path, editable=True)
    hits = [ln.strip() for ln in log.splitlines() if WARNING_RE.search(ln)]
    assert not hits, "setuptools warned:\n" + "\n".join(hits[:10])


def test_wheel_holds_every_module_and_resource(wheel):
    path, _ = wheel
    names = set(zipfile.ZipFile(path).namelist())
    modules = {f"explorer/{p.relative_to(ROOT / 'explorer').as_posix()}" for p in (ROOT / "explorer").rglob("*.py")}
    resources = {f"explorer/resources/{p.relative_to(ROOT / 'resources').as_posix()}"
                 for p in (ROOT / "resources").rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert modules and resources
    assert modules <= names, sorted(modules - names)
    assert resources <= names, sorted(resources - names)
    # the files the code opens by these names
    for needed in ("explorer/resources/presets.json", "explorer/resources/icons/app.svg",
                   "explorer/resources/batches/resnet_50.txt"):
        assert needed in names
    assert not any(n.startswith(("tests/", "resources/", "build/")) for n in names), "stray top-level files"


def test_wheel_metadata_license_is_spdx(wheel):
    path, _ = wheel
    with zipfile.ZipFile(path) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(meta).decode()
    assert re.search(r"^License-Expression: BSD-3-Clause$", text, re.MULTILINE), text[:600]
    assert re.search(r"^Requires-Dist: torch", text, re.MULTILINE)
