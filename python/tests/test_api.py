"""The Python API of the installed wheel: `netc.analyze` and `netc.check` return what the
bundled binary prints, raise on errors, and the budget example fails when a peak moves.

.ci/packaging runs these in a fresh virtual environment with only the wheel, pytest and
syrupy installed.
"""

import json
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

import netc

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "python" / "examples" / "budget"


def test_analyze_is_the_json_report(monkeypatch):
    monkeypatch.chdir(REPO)
    printed = subprocess.run(
        [netc.find_netc_bin(), "report", "--format", "json", "examples/articles_cnn.net"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert netc.analyze("examples/articles_cnn.net") == json.loads(printed)


def test_analyze_one_scenario(monkeypatch):
    monkeypatch.chdir(REPO)
    report = netc.analyze("examples/articles_cnn.net", scenario="serve")
    (serve,) = report["scenarios"]
    assert serve["model"] == "articles_cnn"
    assert serve["peak_line"] == "examples/articles_cnn.net:6"
    assert serve["budget_bytes"] == 64 * 2**20


def test_the_binary_is_the_bundled_one():
    # The installed wheel's package and binary, not the checkout's sources or a netc on PATH.
    assert "site-packages" in Path(netc.__file__).parts
    netc_bin = Path(netc.find_netc_bin())
    assert netc_bin.is_file()
    assert netc_bin.parent == Path(sysconfig.get_path("scripts"))
    version = subprocess.run([str(netc_bin), "--version"], capture_output=True, text=True, check=True).stdout
    assert version.startswith("netc ")


def test_check_returns_the_diagnostics(tmp_path):
    bad = tmp_path / "bad.net"
    bad.write_text("model m() {\n  input x: f32[2, 3]\n  return linear(x, 4, bogus=1)\n}\n")
    (diagnostic,) = netc.check(bad)
    assert diagnostic["code"] == "E0209"
    assert diagnostic["severity"] == "error"
    assert diagnostic["start"] == {"line": 3, "column": 23}


def test_check_takes_levels(tmp_path):
    unused = tmp_path / "unused.net"
    unused.write_text("model m() {\n  input x: f32[2, 3]\n  t = relu(x)\n  return x\n}\n")
    assert [(d["name"], d["severity"]) for d in netc.check(unused)] == [("unused", "warning")]
    assert netc.check(unused, allow=["unused"]) == []
    assert [d["severity"] for d in netc.check(unused, deny=["warnings"])] == ["error"]


def test_analyze_raises_on_errors(tmp_path):
    bad = tmp_path / "bad.net"
    bad.write_text("model m() {\n  input x: f32[2, 3]\n  return linear(x, 4, bogus=1)\n}\ninfer s { model m() }\n")
    with pytest.raises(netc.AnalyzeError) as raised:
        netc.analyze(bad)
    assert [d["code"] for d in raised.value.diagnostics] == ["E0209"]
    assert "error: 1 error; 1 scenario not simulated" in str(raised.value)


def test_a_missing_path_is_a_netc_error(tmp_path):
    with pytest.raises(netc.NetcError) as raised:
        netc.analyze(tmp_path / "missing.net")
    assert raised.value.returncode == 2
    with pytest.raises(netc.NetcError):
        netc.check(tmp_path / "missing.net")


def test_the_budget_example_fails_when_a_peak_moves(pytester):
    for name in ("classifier.net", "test_budget.py"):
        shutil.copy(EXAMPLE / name, pytester.path / name)
    shutil.copytree(EXAMPLE / "__snapshots__", pytester.path / "__snapshots__")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)

    model = pytester.path / "classifier.net"
    model.write_text(model.read_text().replace("conv2d(x, 32,", "conv2d(x, 48,"))
    moved = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    moved.assert_outcomes(passed=1, failed=1)
    moved.stdout.fnmatch_lines(["*peak_bytes*"])
