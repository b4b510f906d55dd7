# SPDX-License-Identifier: Apache-2.0
"""safetensors, backed by the safetensors-cxx C++ library: the reference package's API
(safe_open, serialize, serialize_file, deserialize, SafetensorError) plus `safetensors.cxx`."""

from ._open import _safe_open_handle, safe_open  # noqa: F401
from ._safetensors_cxx import SafetensorError  # noqa: F401
from ._serialize import TensorSpec, deserialize, serialize, serialize_file  # noqa: F401
from ._version import __version__  # noqa: F401
