"""The Model tab shows the planner's measured findings (the convs fed subnormal inputs) under its answer, and
a saved session keeps them."""

import dataclasses

FINDING = ("finding: 1 conv is fed subnormal (denormal) inputs (tail; up to 100% of an input): 2.7 ms per "
           "forward of the 5.7 ms forward; torch.set_flush_denormal(True) measured 2.4 ms on them")


def _with_finding(report):
    report.modes[0] = dataclasses.replace(report.modes[0], finding=FINDING)
    return report


def test_the_model_tab_shows_the_finding_under_the_answer_and_a_session_keeps_it(make_window, tmp_path):
    from explorer.core.session.state import ModelDone
    from tests.core.session.test_session_state import _report

    win = make_window()
    win.session.apply(ModelDone(_with_finding(_report())))
    text = win.model_view.answer.text()
    assert text.splitlines()[0] == win.session.model_report.answer() and FINDING in text.splitlines()
    path = tmp_path / "m.json"
    assert win.save_session(str(path), ask=False)
    win2 = make_window()
    assert win2.open_session(str(path))
    assert FINDING in win2.model_view.answer.text().splitlines()

