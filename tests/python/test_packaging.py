# SPDX-License-Identifier: Apache-2.0
"""Packaging: the version, the type stubs and py.typed, setup.py's metadata, and (opt-in:
SAFETENSORS_TEST_PIP=1, a full build) an offline `pip install --no-build-isolation`."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import safetensors

ROOT = Path(__file__).resolve().parents[2]


def cmake_version():
    return re.search(r"project\([^)]*VERSION\s+([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)


def test_version_is_the_cmake_project_version():
    assert safetensors.__version__ == cmake_version()


def test_stubs_and_py_typed_ship_with_the_package():
    package = Path(safetensors.__file__).parent
    assert (package / "py.typed").exists()
    stub = ast.parse((package / "__init__.pyi").read_text())
    stubbed = {node.name for node in stub.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    stubbed |= {t.id for node in stub.body if isinstance(node, ast.AnnAssign) for t in [node.target]}
    public = {"safe_open", "_safe_open_handle", "serialize", "serialize_file", "deserialize", "SafetensorError",
              "TensorSpec", "__version__"}
    assert public <= stubbed
    assert all(hasattr(safetensors, name) for name in public)


def test_setup_py_reports_the_version_without_building():
    out = subprocess.run([sys.executable, "setup.py", "--version"], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip().splitlines()[-1] == cmake_version()


@pytest.mark.skipif(os.environ.get("SAFETENSORS_TEST_PIP") != "1", reason="a full build: SAFETENSORS_TEST_PIP=1")
def test_pip_installs_offline_and_the_package_imports(tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
                    "--target", str(target), str(ROOT)], check=True, capture_output=True)
    assert (target / "safetensors" / "__init__.pyi").exists() and (target / "safetensors" / "py.typed").exists()
    env = dict(os.environ, PYTHONPATH=str(target))
    out = subprocess.run([sys.executable, "-c", "import safetensors; print(safetensors.__version__)"], env=env,
                         cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == cmake_version()
