# SPDX-License-Identifier: Apache-2.0
"""Packaging: the version, the type stubs and py.typed, setup.py's metadata. The offline
`pip install --no-build-isolation` of a clean copy is ctest python_pip_install (pip_install.py)."""

import ast
import dataclasses
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import safetensors
import safetensors.cxx

try:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version
except ImportError:  # pip vendors the same library
    from pip._vendor.packaging.specifiers import SpecifierSet
    from pip._vendor.packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]


def cmake_version():
    return re.search(r"project\([^)]*VERSION\s+([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)


def reference_version():
    text = (ROOT / "python" / "CMakeLists.txt").read_text()
    return re.search(r"set\(SAFETENSORS_PYTHON_REFERENCE_VERSION\s+([0-9.]+)\)", text).group(1)


def test_version_is_the_reference_release_with_the_library_version_as_local_label():
    assert safetensors.__version__ == f"{reference_version()}+cxx.{cmake_version()}"
    assert safetensors.cxx.__version__ == cmake_version()
    assert safetensors.cxx.reference_version == reference_version()


def test_version_meets_the_ecosystems_pins():
    version = Version(safetensors.__version__)
    assert str(version) == safetensors.__version__  # already in PEP 440's normal form
    assert version.public == reference_version() and version >= Version("0.7.0")
    # transformers, diffusers, accelerate and peft require safetensors>=0.4.3.
    assert SpecifierSet(">=0.4.3").contains(version) and not SpecifierSet("<0.7.0").contains(version)


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
    assert out.stdout.strip().splitlines()[-1] == safetensors.__version__


def _public_functions(module, names):
    return [(f"{module.__name__}.{name}", getattr(module, name)) for name in names]


def _reference_api():
    import importlib

    out = []
    for name in ("numpy", "flax", "tensorflow", "paddle", "mlx"):
        module = importlib.import_module(f"safetensors.{name}")
        out += _public_functions(module, ["save", "save_file", "load", "load_file"])
    try:
        import safetensors.torch as st_torch
    except ImportError:  # no torch here
        pass
    else:
        out += _public_functions(st_torch, ["save", "save_file", "load", "load_file", "save_model", "load_model",
                                            "storage_ptr", "storage_size"])
    out += _public_functions(safetensors, ["serialize", "serialize_file", "deserialize"])
    out.append(("safetensors.safe_open", safetensors.safe_open.__init__))
    return out


@pytest.mark.parametrize("name,function", _reference_api(), ids=lambda v: v if isinstance(v, str) else "")
def test_reference_api_functions_are_annotated_and_documented(name, function):
    signature = inspect.signature(function)
    unannotated = [p.name for p in signature.parameters.values()
                   if p.name != "self" and p.annotation is inspect.Parameter.empty]
    assert not unannotated, f"{name}: parameters without annotations: {unannotated}"
    assert signature.return_annotation is not inspect.Signature.empty, f"{name}: no return annotation"
    doc = inspect.getdoc(function if name != "safetensors.safe_open" else safetensors.safe_open) or ""
    for section in ("Args:", "Returns:", "Example:"):
        assert section in doc, f"{name}: its docstring has no {section} section"
    # help() shows more than a line or two: the sections describe every argument.
    for parameter in signature.parameters.values():
        if parameter.name != "self" and parameter.kind is not inspect.Parameter.VAR_KEYWORD:
            assert f"{parameter.name} (" in doc or f"{parameter.name}," in doc, f"{name}: {parameter.name} undocumented"


def test_safetensors_cxx_functions_are_annotated_and_documented():
    import safetensors.cxx as cxx

    for name in cxx.__all__:
        value = getattr(cxx, name)
        if not callable(value) or isinstance(value, type) and issubclass(value, BaseException):
            continue
        function = value.__init__ if isinstance(value, type) else value
        if function is object.__init__:
            continue
        signature = inspect.signature(function)
        unannotated = [p.name for p in signature.parameters.values()
                       if p.name != "self" and p.annotation is inspect.Parameter.empty]
        assert not unannotated, f"safetensors.cxx.{name}: parameters without annotations: {unannotated}"
        assert signature.return_annotation is not inspect.Signature.empty, f"safetensors.cxx.{name}"
        doc = inspect.getdoc(value) or ""
        for section in ("Args:", "Returns:", "Example:") if not dataclasses.is_dataclass(value) else ():
            assert section in doc, f"safetensors.cxx.{name}: its docstring has no {section} section"
