"""pytester runs the budget example in a temporary folder (test_api.py)."""

pytest_plugins = ["pytester"]
