"""netc from Python: a model's memory report and diagnostics, for tests.

The wheel carries the `netc` binary; these functions run it (`netc report --format json`,
`netc check --format json`) and return its JSON as dicts, typed by the TypedDicts in this
module. Running the bundled binary, rather than linking the compiler into an extension
module, keeps one artifact per platform and the Rust code free of `unsafe` (ARCHITECTURE.md,
"Packaging").

    import netc

    report = netc.analyze("models/resnet.net")
    serve = next(s for s in report["scenarios"] if s["name"] == "serve")
    assert serve["peak_bytes"] <= serve["budget_bytes"]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from typing import Iterable, List, Optional, Sequence, Union

from netc._types import (
    Breakdown,
    Diagnostic,
    Label,
    Ledgers,
    Line,
    Phase,
    Position,
    Range,
    Report,
    Scenario,
    Severity,
)

__all__ = [
    "AnalyzeError",
    "Breakdown",
    "Diagnostic",
    "Label",
    "Ledgers",
    "Line",
    "NetcError",
    "Phase",
    "Position",
    "Range",
    "Report",
    "Scenario",
    "Severity",
    "analyze",
    "check",
    "find_netc_bin",
]

StrPath = Union[str, "os.PathLike[str]"]
"""A path as `open` takes it."""


class NetcError(Exception):
    """netc could not do its job: a path that does not exist, a file that cannot be read,
    an unknown scenario or option (exit code 2), or no `netc` binary at all."""

    def __init__(self, message: str, returncode: Optional[int] = None) -> None:
        super().__init__(message)
        #: The binary's exit code, `None` when it did not run.
        self.returncode = returncode


class AnalyzeError(NetcError):
    """The program has errors, so there is no report (a report of a wrong program would be
    wrong too). The message is netc's human rendering of the errors."""

    def __init__(self, message: str, diagnostics: List[Diagnostic]) -> None:
        super().__init__(message, 1)
        #: The error-level diagnostics, as `check` returns them.
        self.diagnostics = diagnostics


def find_netc_bin() -> str:
    """The `netc` executable this package runs.

    `NETC_BIN` when set (to test a build of netc itself); else the one installed with this
    package: in the scripts folder of the environment, of the user scheme (`pip install
    --user`), or beside the package (`pip install --target`); last, `netc` on `PATH`.
    """
    override = os.environ.get("NETC_BIN")
    if override:
        return override
    exe = "netc" + (sysconfig.get_config_var("EXE") or "")
    candidates = [os.path.join(sysconfig.get_path("scripts"), exe)]
    if sys.version_info >= (3, 10):
        user_scheme = sysconfig.get_preferred_scheme("user")
    elif os.name == "nt":
        user_scheme = "nt_user"
    elif sys.platform == "darwin" and sys._framework:  # type: ignore[attr-defined]
        user_scheme = "osx_framework_user"
    else:
        user_scheme = "posix_user"
    candidates.append(os.path.join(sysconfig.get_path("scripts", scheme=user_scheme), exe))
    # `pip install --target DIR` puts the package in DIR and the binary in DIR/bin.
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    candidates.append(os.path.join(here, "bin", exe))
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    on_path = shutil.which(exe)
    if on_path:
        return on_path
    raise NetcError(
        "the netc binary was not found (looked at " + ", ".join(candidates) + " and PATH); "
        "reinstall the package: pip install --force-reinstall netc"
    )


def _paths(path: Union[StrPath, Iterable[StrPath]]) -> List[str]:
    if isinstance(path, (str, os.PathLike)):
        return [os.fspath(path)]
    return [os.fspath(p) for p in path]


def _run(args: Sequence[str], cwd: Optional[StrPath]) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [find_netc_bin(), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )


def _levels(allow: Iterable[str], warn: Iterable[str], deny: Iterable[str]) -> List[str]:
    out: List[str] = []
    for flag, names in (("-A", allow), ("-W", warn), ("-D", deny)):
        for name in names:
            out += [flag, name]
    return out


def check(
    path: Union[StrPath, Iterable[StrPath]],
    *,
    allow: Iterable[str] = (),
    warn: Iterable[str] = (),
    deny: Iterable[str] = (),
    cwd: Optional[StrPath] = None,
) -> List[Diagnostic]:
    """The diagnostics of `netc check --format json PATH...`, in file order.

    `allow`, `warn` and `deny` take lint names or codes (and `warnings`), as `-A`, `-W` and
    `-D` do; the nearest `netc.toml` applies too. File names are as netc prints them:
    relative to `cwd` (default: the current directory) when given relative.

    Raises `NetcError` when netc could not do its job (exit code 2: a path that does not
    exist, a malformed `netc.toml`).
    """
    args = ["check", "--format", "json", "--color", "never", *_levels(allow, warn, deny), "--", *_paths(path)]
    done = _run(args, cwd)
    if done.returncode not in (0, 1):
        raise NetcError(done.stderr.strip() or f"netc check exited with {done.returncode}", done.returncode)
    document = json.loads(done.stdout)
    diagnostics: List[Diagnostic] = document["diagnostics"]
    return diagnostics


def analyze(
    path: Union[StrPath, Iterable[StrPath]],
    *,
    scenario: Optional[str] = None,
    cwd: Optional[StrPath] = None,
) -> Report:
    """The report of `netc report --format json PATH...`: every scenario's peak, ledgers,
    phases and lines, as dicts (the same document as the Rust `netc::analyze`).

    `scenario` keeps only the scenario of that name. Figures are exact integers of bytes,
    parameters and MACs; file names are as netc prints them, relative to `cwd` (default:
    the current directory) when given relative, so a snapshot does not depend on where the
    repository is checked out.

    Raises `AnalyzeError` (with the diagnostics) when the program has errors, and
    `NetcError` when netc could not do its job (a path that does not exist, no scenario of
    that name).
    """
    paths = _paths(path)
    args = ["report", "--format", "json", "--color", "never"]
    if scenario is not None:
        args += ["--scenario", scenario]
    done = _run([*args, "--", *paths], cwd)
    if done.returncode == 1:
        errors = [d for d in check(paths, cwd=cwd) if d["severity"] == "error"]
        raise AnalyzeError(done.stderr.rstrip(), errors)
    if done.returncode != 0:
        raise NetcError(done.stderr.strip() or f"netc report exited with {done.returncode}", done.returncode)
    report: Report = json.loads(done.stdout)
    return report
