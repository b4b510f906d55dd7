# SPDX-License-Identifier: Apache-2.0
"""Runs mypy with the arguments given, or exits 77 (ctest's skip) when mypy is not installed
(Debian's python3-mypy, scripts/install-deps)."""

import sys

try:
    from mypy import api
except ImportError:
    print("mypy is not installed (python3-mypy): skipped")
    sys.exit(77)

out, err, status = api.run(sys.argv[1:])
sys.stdout.write(out)
sys.stderr.write(err)
sys.exit(status)
