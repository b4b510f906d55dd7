# SPDX-License-Identifier: Apache-2.0
"""Builds and installs the `safetensors` Python package: setuptools drives CMake to build the
extension module (no download: `pip install --no-build-isolation .` uses the installed
setuptools, CMake, pybind11 and the C++ dependencies of scripts/install-deps)."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def distribution_version():
    """The version python/CMakeLists.txt writes into _version.py: the reference release whose API
    the package implements, with the C++ library's version (CMakeLists.txt's project()) as a
    PEP 440 local label, e.g. 0.7.0+cxx.0.1.0 (docs/python.md#version)."""
    library = re.search(r"project\([^)]*VERSION\s+([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    python_cmake = (ROOT / "python" / "CMakeLists.txt").read_text()
    reference = re.search(r"set\(SAFETENSORS_PYTHON_REFERENCE_VERSION\s+([0-9.]+)\)", python_cmake).group(1)
    return f"{reference}+cxx.{library}"


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Configures the project with only the library and the Python package, builds the
    extension target, and copies it (and the generated _version.py) into the package."""

    def build_extension(self, ext):
        target = Path(self.get_ext_fullpath(ext.name)).resolve()
        build_dir = Path(self.build_temp).resolve() / "cmake"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir), *generator,
            "-DCMAKE_BUILD_TYPE=Release", f"-DPython3_EXECUTABLE={sys.executable}",
            "-DSAFETENSORS_BUILD_PYTHON=ON", "-DSAFETENSORS_BUILD_TESTS=OFF", "-DSAFETENSORS_BUILD_BENCH=OFF",
            "-DSAFETENSORS_BUILD_FUZZ=OFF", "-DSAFETENSORS_BUILD_CLI=OFF", "-DSAFETENSORS_BUILD_FORMATS=OFF", "-DSAFETENSORS_BUILD_PIPELINE=OFF",
            "-DSAFETENSORS_INSTALL=OFF",
        ]
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "_safetensors_cxx", "-j", jobs], check=True)
        built = build_dir / "python" / "safetensors"
        module = next(built.glob("_safetensors_cxx*" + Path(target).suffix))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(module, target)
        shutil.copyfile(built / "_version.py", target.parent / "_version.py")


setup(
    name="safetensors",
    version=distribution_version(),
    description="SafeTensors reading, writing and validation, backed by the safetensors-cxx C++ library",
    license="Apache-2.0",
    python_requires=">=3.8",
    install_requires=["numpy"],
    extras_require={"torch": ["torch"]},
    packages=["safetensors"],
    package_dir={"safetensors": "python/safetensors"},
    package_data={"safetensors": ["__init__.pyi", "py.typed"]},
    ext_modules=[CMakeExtension("safetensors._safetensors_cxx")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build/setuptools"}},
    zip_safe=False,
)
