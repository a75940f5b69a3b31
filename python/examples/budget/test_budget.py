"""A model's memory budget as a pytest snapshot (syrupy): the test fails, showing what moved,
when a change to the model moves a scenario's peak or where it happens.

    pip install netc pytest syrupy
    pytest                      # compares with __snapshots__/test_budget.ambr
    pytest --snapshot-update    # accepts new figures (commit the .ambr file)
"""

from pathlib import Path

import netc

HERE = Path(__file__).parent


def test_classifier_budget(snapshot, monkeypatch):
    # File names in the report are relative to the current directory: run from here, so the
    # snapshot does not depend on where the repository is checked out.
    monkeypatch.chdir(HERE)
    report = netc.analyze("classifier.net")
    budget = {
        s["name"]: {
            "peak_bytes": s["peak_bytes"],
            "peak_at": f"{s['peak_phase']} {s['peak_op']} ({s['peak_line']})",
            "budget_bytes": s["budget_bytes"],
            "ledgers": s["ledgers"],
        }
        for s in report["scenarios"]
    }
    assert budget == snapshot


def test_classifier_is_clean(monkeypatch):
    monkeypatch.chdir(HERE)
    assert netc.check("classifier.net", deny=["warnings"]) == []
