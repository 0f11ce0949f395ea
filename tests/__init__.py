"""The test tree (a package so that ``tests.helpers`` resolves to this checkout)."""
