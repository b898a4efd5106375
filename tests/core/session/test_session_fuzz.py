"""#33: "every input the tool reads is checked like every file it writes". A session file edited by hand (or
by another tool) may hold any JSON value anywhere: opening it either works or is one sentence (an
ExplorerError), never another exception, and what opens can be restored into a session and saved again."""

from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.core.errors import ExplorerError
from explorer.core.session.state import ModelDone, SessionState, SweepBegun, SweepFinished, SweepRows
from explorer.core.session.store import session_from_dict
from tests.core.session.test_session_state import SPEC, _report, _row

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10 ** 40), max_value=10 ** 40)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6)


def _full_session(tmp_path) -> dict:
    """A session with every part a file can hold: a run's rows, a sweep, a model report, the window's part."""
    from explorer.core.jobs.events import PathFinished, SweepProgress
    from explorer.core.problem.sweep_plan import SweepPoint

    s = SessionState(SPEC, {"paths": ["dense", "mkldnn"], "threads": 2, "budget_ms": 5, "trace": False})
    pts = [SweepPoint(0, {"g": 1}, SPEC), SweepPoint(1, {"g": 2}, SPEC.replace(g=2))]
    s.apply(SweepBegun(pts, {"mode": "line", "varies": "g=1,2", "paths": "dense,mkldnn", "budget_ms": 5},
                       "line", ("dense", "mkldnn")))
    s.apply(SweepRows([(0, _row("dense", 1.0, vary="g=1")), (0, _row("mkldnn", 0.5, vary="g=1"))]))
    s.apply(SweepFinished(SweepProgress(2, 2, 0, 2, 0.2, 0.0), False))
    s.apply(PathFinished(_row("dense", 1.0)))
    s.apply(PathFinished(_row("mkldnn", 0.7)))
    s.set_baseline("dense")
    s.apply(ModelDone(_report()))
    s.window = {"tab": "Model", "baselines": [{"label": "base.csv", "rows": [{"desc": SPEC.descriptor(),
                "path": "dense", "median_ms": 1.0}]}], "pair": ["base.csv", "current results"]}
    path = tmp_path / "full.json"
    s.save(path)
    return json.loads(path.read_text())


def _places(d, at=()):
    """Every (path of keys/indices) in a JSON document, the document itself included."""
    yield at
    if isinstance(d, dict):
        for k, v in d.items():
            yield from _places(v, (*at, k))
    elif isinstance(d, list):
        for i, v in enumerate(d[:3]):  # the first items stand for the rest (rows repeat one shape)
            yield from _places(v, (*at, i))


def _replace(d, at, value):
    if not at:
        return value
    d = copy.deepcopy(d)
    node = d
    for k in at[:-1]:
        node = node[k]
    node[at[-1]] = value
    return d


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(data=st.data())
def test_any_value_anywhere_in_a_session_file_opens_or_is_one_sentence(tmp_path_factory, data):
    full = _fullness(tmp_path_factory)
    at = data.draw(st.sampled_from(sorted(_places(full), key=repr)))
    edited = _replace(full, at, data.draw(JSON))
    try:
        stored = session_from_dict(json.loads(json.dumps(edited)), "s.json")
    except ExplorerError as e:
        text = str(e)
        assert text and "\n" not in text.strip() and "Traceback" not in text, text
        return
    s = SessionState()
    s.restore(stored)  # what opened can be shown...
    out = tmp_path_factory.mktemp("again") / "again.json"
    s.save(out)  # ...and saved again
    session_from_dict(json.loads(out.read_text()), "again.json")


_CACHE: dict = {}


def _fullness(tmp_path_factory) -> dict:
    if "full" not in _CACHE:
        _CACHE["full"] = _full_session(tmp_path_factory.mktemp("full"))
    return _CACHE["full"]


def test_the_fuzzed_file_has_every_part():
    """The fuzz above edits a file that really has rows, a sweep, a model report and the window's part."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        full = _full_session(Path(d))
    assert full["results"] and full["sweep"]["items"] and full["model"]["layers"] and full["window"]


def _opens_or_one_sentence(edited) -> str:
    """'' when the edited file opens and restores into a window's session; else the one sentence it gave."""
    try:
        stored = session_from_dict(json.loads(json.dumps(edited)), "s.json")
    except ExplorerError as e:
        assert "\n" not in str(e).strip()
        return str(e)
    SessionState().restore(stored)
    return ""


def test_a_sweep_point_whose_varied_values_do_not_match_the_sweep_is_one_sentence(tmp_path):
    """Found by the fuzz above: a line sweep's point varying nothing ({}) raised IndexError in restore, so the
    window's Open session raised instead of saying why; so did a point varying another field (KeyError) and a
    list as a value (unhashable on the chart's axis)."""
    full = _full_session(tmp_path)
    assert _opens_or_one_sentence(full) == ""
    cases = {
        ("sweep", "points", 0, "values"): {},
        ("sweep", "points", 1, "values"): {"oc": 8},
        ("sweep", "points", 0, "values", "g"): [1],
        ("sweep", "points", 1, "values", "g"): 1e308,
    }
    for at, value in cases.items():
        said = _opens_or_one_sentence(_replace(full, at, value))
        assert said.startswith("s.json: sweep.points["), (at, said)
    grid = _replace(_replace(full, ("sweep", "setup", "mode"), "grid"), ("sweep", "points"),
                    [{**p, "values": {"g": p["values"]["g"], "oc": 8}} for p in full["sweep"]["points"]])
    assert _opens_or_one_sentence(grid) == ""  # a grid whose points vary two fields opens
    grid_short = _replace(grid, ("sweep", "points", 1, "values"), {"g": 2})
    assert "its two varied fields (g, oc)" in _opens_or_one_sentence(grid_short)
