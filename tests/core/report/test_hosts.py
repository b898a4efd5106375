"""Hosts side by side (explorer.core.report.hosts): speedups against a chosen host, noisy rows kept out."""

import math

import pytest

from explorer.core.errors import InputError
from explorer.core.report.hosts import compare_hosts


def _row(desc, host, ms, quality="ok", status="ok", path="dense"):
    return {"desc": desc, "path": path, "dtype": "f32", "threads": 1, "status": status, "median_ms": ms,
            "quality": quality, "host": host, "iqr_ms": 0.0}


def test_speedups_against_the_chosen_host_and_geomean_without_noisy_rows():
    rows = [_row("a", "x", 2.0), _row("a", "y", 1.0), _row("a", "z", 4.0),
            _row("b", "x", 3.0), _row("b", "y", 1.5), _row("b", "z", 1.0, quality="noisy"),
            _row("c", "x", 1.0), _row("c", "y", None, status="error")]
    c = compare_hosts(rows, "x")
    assert c.hosts == ["x", "y", "z"] and c.keys == [("a", "dense", "f32", 1, "FWD"), ("b", "dense", "f32", 1, "FWD"),
                                                     ("c", "dense", "f32", 1, "FWD")]
    assert c.speedup(("a", "dense", "f32", 1, "FWD"), "y") == (2.0, False)
    assert c.speedup(("b", "dense", "f32", 1, "FWD"), "z") == (3.0, True)  # shown, uncertain
    assert c.speedup(("c", "dense", "f32", 1, "FWD"), "y") == (None, False)
    assert c.pairs["y"].geomean == pytest.approx(2.0)
    assert c.pairs["z"].geomean == pytest.approx(0.5)  # the noisy pair is not counted
    again = compare_hosts(rows, "y")
    assert again.pairs["x"].geomean == pytest.approx(math.exp((math.log(0.5) + math.log(0.5)) / 2))


def test_refusals_are_one_sentence():
    with pytest.raises(InputError, match="no host column"):
        compare_hosts([{"desc": "a", "path": "dense"}])
    with pytest.raises(InputError, match="1 host: nothing"):
        compare_hosts([_row("a", "x", 1.0)])
    with pytest.raises(InputError, match="'w' is not in the CSV; it holds x, y"):
        compare_hosts([_row("a", "x", 1.0), _row("a", "y", 1.0)], "w")
