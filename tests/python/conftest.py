# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the Python tests: hand-built files for error cases."""

import json
import struct

import pytest


def raw_file(header, data=b"", prefix=None):
    """A SafeTensors file from a header dict (or JSON text) and data bytes, unchecked."""
    text = header if isinstance(header, str) else json.dumps(header, separators=(",", ":"))
    body = text.encode()
    length = len(body) if prefix is None else prefix
    return struct.pack("<Q", length) + body + data


@pytest.fixture
def write_raw(tmp_path):
    def write(name, header, data=b"", prefix=None):
        path = tmp_path / name
        path.write_bytes(raw_file(header, data, prefix))
        return path

    return write
