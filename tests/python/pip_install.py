# SPDX-License-Identifier: Apache-2.0
"""ctest python_pip_install: `pip install --no-build-isolation` of a clean copy of the tree (the
files git tracks, as they are in the work tree; no build folder) into a fresh venv that sees the
system's packages (numpy, torch), offline; then `pip check` (no problem the install added), the
installed distribution's version as importlib.metadata reports it, and pip taking it for the
`safetensors>=0.4.3` the ecosystem pins.

    python3 pip_install.py SOURCE_DIR WORK_DIR EXPECTED_VERSION
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path


def run(*command, **kwargs):
    print("+", " ".join(map(str, command)), flush=True)
    return subprocess.run([str(c) for c in command], check=True, **kwargs)


def pip_check(python, env, cwd):
    """The problems `pip check` reports, one per line (none when it passes)."""
    out = subprocess.run([str(python), "-m", "pip", "check"], env=env, cwd=cwd, capture_output=True, text=True)
    lines = {line.strip() for line in out.stdout.splitlines() if line.strip()}
    if out.returncode == 0:
        return set()
    assert lines, out.stderr
    return lines


def clean_copy(source, target):
    """The tracked files of `source` (a git work tree), else the tree without build folders."""
    try:
        listed = subprocess.run(["git", "-C", str(source), "ls-files", "-z"], check=True, capture_output=True).stdout
        files = [f for f in listed.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = None
    if files is None:
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("build*", ".git"))
        return
    for name in files:
        origin = source / name
        if origin.is_file():  # a tracked file deleted in the work tree is left out
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target / name)


def main():
    source, work, expected = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve(), sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    tree = work / "src"
    clean_copy(source, tree)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_INDEX_URL", "PIP_FIND_LINKS")}
    env["PIP_NO_INDEX"] = "1"  # offline: nothing may be downloaded
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    run(sys.executable, "-m", "venv", "--system-site-packages", work / "venv", env=env)
    python = work / "venv" / "bin" / "python"
    # `pip check` judges every distribution the venv sees, the system's too (on this machine
    # Debian's pygobject requires a pycairo that is not installed): what it said before
    # installing is the system's, anything more would be ours.
    before = pip_check(python, env, work)
    run(python, "-m", "pip", "install", "-q", "--no-build-isolation", tree, env=env, cwd=work)
    after = pip_check(python, env, work)
    assert after <= before, f"pip check after installing: {sorted(after - before)}"
    assert not any("safetensors" in line.lower() for line in after), sorted(after)
    check = (
        "import importlib.metadata as m, safetensors, safetensors.cxx, safetensors.numpy\n"
        f"assert m.version('safetensors') == safetensors.__version__ == {expected!r}, m.version('safetensors')\n"
        "assert safetensors.__file__.startswith(%r), safetensors.__file__\n" % str(work / "venv")
        + "import numpy as np, tempfile, os\n"
        "p = os.path.join(tempfile.mkdtemp(), 'a.safetensors')\n"
        "safetensors.numpy.save_file({'a': np.arange(3)}, p)\n"
        "assert safetensors.numpy.load_file(p)['a'].tolist() == [0, 1, 2]\n"
        "assert safetensors.cxx.validate(p).ok\n"
    )
    run(python, "-c", check, env=env, cwd=work)
    # What `pip install transformers` asks of it: the pin is already satisfied, nothing replaces it.
    out = run(python, "-m", "pip", "install", "safetensors>=0.4.3", env=env, cwd=work, capture_output=True,
              text=True).stdout
    assert "Requirement already satisfied: safetensors>=0.4.3" in out, out
    shutil.rmtree(work)
    print("ok:", expected)


if __name__ == "__main__":
    main()
