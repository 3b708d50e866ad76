"""Fixtures and helpers shared by several test modules (test modules import nothing from each other).

The modules that define fixtures are registered in tests/conftest.py (`pytest_plugins`)."""
