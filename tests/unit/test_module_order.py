"""tests/helpers/order.py: the longest modules start first, each module's tests stay together and in order."""
from __future__ import annotations

from tests.helpers import order


def test_listed_modules_first_in_their_order_and_the_rest_as_collected():
    first, second = order.LONGEST_FIRST[0], order.LONGEST_FIRST[1]
    items = ["tests/unit/test_a.py::t1", f"{second}::x1", "tests/unit/test_b.py::t1", f"{first}::y1",
             f"{second}::x2", "tests/unit/test_a.py::t2", f"{first}::y2"]
    got = order.longest_first(items, lambda it: it.partition("::")[0])
    assert got == [f"{first}::y1", f"{first}::y2", f"{second}::x1", f"{second}::x2",
                   "tests/unit/test_a.py::t1", "tests/unit/test_b.py::t1", "tests/unit/test_a.py::t2"]


def test_a_listed_module_that_is_gone_is_named():
    assert order.stale(list(order.LONGEST_FIRST)) == []
    assert order.stale(list(order.LONGEST_FIRST[1:])) == [order.LONGEST_FIRST[0]]
