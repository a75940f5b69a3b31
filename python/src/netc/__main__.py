"""`python -m netc ARGS`: runs the bundled `netc` binary with ARGS (as `ruff` does), for
environments whose scripts folder is not on `PATH`."""

from __future__ import annotations

import os
import subprocess
import sys

from netc import find_netc_bin


def main() -> int:
    """Runs netc with this process's arguments and returns its exit code."""
    netc = find_netc_bin()
    if sys.platform == "win32":
        return subprocess.run([netc, *sys.argv[1:]], check=False).returncode
    os.execvp(netc, [netc, *sys.argv[1:]])
    return 1  # not reached: execvp replaces this process


if __name__ == "__main__":
    sys.exit(main())
