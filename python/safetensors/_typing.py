# SPDX-License-Identifier: Apache-2.0
"""Type aliases the public functions' annotations share."""

import os
from typing import Dict, Optional, Union

# A file name: str, bytes or an os.PathLike (pathlib.Path), as os.fsdecode() takes it.
PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
# `__metadata__`: text keys and values only, or none.
Metadata = Optional[Dict[str, str]]
