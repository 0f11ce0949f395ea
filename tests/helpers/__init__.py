"""Helpers the tests and benches import (``from tests.helpers.contain import ...``)."""
