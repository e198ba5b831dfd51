"""The cache window both trace adapters' context columns walk (simsample.sdk.cache_window_start)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.sdk import cache_window_start


def _walk_back(owned: np.ndarray, j: int, limit: float) -> int:
    """The definition, one launch at a time: the first i (walking back from j-1) at which the
    lines owned by launches i..j-1 reach the limit; 0 if they never do."""
    total = 0
    for i in range(j - 1, -1, -1):
        total += int(owned[i])
        if total >= limit:
            return i
    return 0


@settings(max_examples=300, deadline=None)
@given(
    owned=st.lists(st.integers(0, 50), min_size=0, max_size=400),
    data=st.data(),
    limit=st.floats(0.5, 5000, allow_nan=False),
)
def test_window_start_is_the_walk_back(owned: list[int], data: st.DataObject, limit: float) -> None:
    arr = np.asarray(owned, np.int64)
    j = data.draw(st.integers(0, len(owned)))
    assert cache_window_start(arr, j, limit) == _walk_back(arr, j, limit)


def test_window_reaches_past_the_first_block() -> None:
    # 200 launches of one line each and a cache of 150 lines: the walk crosses its 64-launch block
    owned = np.ones(200, np.int64)
    assert cache_window_start(owned, 200, 150) == 50
    assert cache_window_start(owned, 200, 1000) == 0
    assert cache_window_start(owned, 0, 1) == 0
