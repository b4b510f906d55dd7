# SPDX-License-Identifier: Apache-2.0
"""pytest plugin for ctest python_reference_suite (the reference's own tests, run unchanged):
a framework comparison whose framework is not installed here (jax, tensorflow with h5py, mlx
and paddle are not in Debian) is left out instead of failing to import."""

import importlib.util

NEEDS = {
    "test_flax_comparison.py": ("jax", "flax"),
    "test_tf_comparison.py": ("tensorflow", "h5py"),
    "test_mlx_comparison.py": ("mlx",),
    "test_paddle_comparison.py": ("paddle",),
}


def _installed(module):
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def pytest_ignore_collect(collection_path, config):
    needs = NEEDS.get(collection_path.name)
    if needs and not all(_installed(m) for m in needs):
        return True
    return None
