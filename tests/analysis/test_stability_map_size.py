"""A stability map's grid is sized from the lengths of its axes before any value is read: a
grid above ``analysis.map_max_points`` is refused at once, naming both arguments, their
lengths and the limit (reading ten million values alone takes seconds)."""

import pytest

from qcnmodel import config
from qcnmodel.analysis import stability
from qcnmodel.analysis.stability import stability_map
from qcnmodel.models.fopdt import FOPDTModel
from qcnmodel.params import QCNParams

MODEL = FOPDTModel(QCNParams())


class Untouchable:
    """A sequence of ``n`` values whose values must not be read (only its length)."""

    def __init__(self, n: int):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        raise AssertionError("a value was read before the grid's size was checked")

    def __iter__(self):
        raise AssertionError("the values were iterated before the grid's size was checked")


@pytest.mark.parametrize(
    "kw, shown",
    [
        ({"x_values": Untouchable(10**7), "y_values": [1, 2]}, "10,000,000 x 2 = 20,000,000"),
        ({"x_values": [1e-4], "y_values": Untouchable(10**7)}, "1 x 10,000,000 = 10,000,000"),
        # the default y axis (flows 1 .. analysis.map_max_flows = 100) counts too
        ({"x_values": Untouchable(10**5)}, "100,000 x 100 = 10,000,000"),
    ],
)
def test_too_large_a_grid_is_refused_before_its_values_are_read(kw, shown):
    limit = config.defaults["analysis.map_max_points"]
    with pytest.raises(ValueError) as info:
        stability_map(MODEL, **kw)
    msg = str(info.value)
    assert msg.startswith("x_values, y_values: ") and shown in msg
    assert f"limit of {limit:,} points" in msg and "analysis.map_max_points" in msg
    points = int(shown.rsplit("= ", 1)[1].replace(",", ""))
    assert f"{points * stability.BYTES_PER_POINT / 2**20:,.0f} MiB" in msg


def test_a_grid_at_the_limit_is_not_refused_by_its_size(monkeypatch):
    monkeypatch.setitem(config.defaults, "analysis.map_max_points", 4)
    ds = stability_map(MODEL, x_values=[1e-4, 2e-4], y_values=[1, 2])
    assert ds["stable"].shape == (2, 2)
    with pytest.raises(ValueError, match="3 x 2 = 6 grid points"):
        stability_map(MODEL, x_values=[1e-4, 2e-4, 3e-4], y_values=[1, 2])
