"""The window's part of a session file (selected tab, Compare's baselines and pair, the Model tab's inputs, the
run's allocator and ISA cap): saved and read back exactly, and a damaged part refused with one sentence."""

import json

import pytest

from explorer.core.errors import InputError
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import Result
from explorer.core.report.sweep_data import result_row
from explorer.core.session.state import RunStarted, SessionState
from explorer.core.session.store import load_session

SPEC = parse_descriptor("mb1ic8ih8oc8kh3ph1")


def _state():
    from explorer.core.jobs.events import PathFinished

    s = SessionState(SPEC)
    s.apply(RunStarted(SPEC, {"paths": ["dense"], "threads": 1, "budget_ms": 5.0, "trace": False,
                              "allocator": "jemalloc", "isa": "avx2"}))
    r = Result(spec=SPEC, path="dense", threads=1, status="ok", median_ms=1.5, samples=5, quality="noisy")
    s.apply(PathFinished(r))
    s.window = {"tab": "Compare", "baselines": [{"label": "a.csv", "rows": [result_row(r)]}],
                "pair": ["a.csv", "current results"]}
    return s


def test_the_window_part_and_run_options_come_back_as_saved(tmp_path):
    s = _state()
    path = tmp_path / "s.json"
    s.save(path)
    t = SessionState.load(path)
    assert t.window == s.window
    assert t.run_options["allocator"] == "jemalloc" and t.run_options["isa"] == "avx2"
    assert t.options["allocator"] == "jemalloc" and t.options["isa"] == "avx2"
    again = tmp_path / "again.json"
    t.save(again)
    assert again.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("where, value, words", [
    (("window",), [1], "window must be an object"),
    (("window", "tab"), 3, "window.tab must be a tab's name"),
    (("window", "baselines"), [{"label": "x"}], "baselines[0] must be an object with a 'label'"),
    (("window", "pair"), ["a"], "pair must be two labels"),
    (("options", "allocator"), "glibc", "options.allocator must be one of"),
    (("options", "isa"), "avx9000", "options.isa must be one of"),
])
def test_a_damaged_window_part_is_refused_in_one_sentence(tmp_path, where, value, words):
    s = _state()
    path = tmp_path / "s.json"
    s.save(path)
    data = json.loads(path.read_text())
    node = data
    for k in where[:-1]:
        node = node[k]
    node[where[-1]] = value
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=words.replace("(", r"\(").replace("[", r"\[")) as e:
        load_session(path)
    assert "\n" not in str(e.value)
