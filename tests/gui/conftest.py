"""GUI test fixtures: offscreen Qt, isolated QSettings and peak cache, no modal dialogs, no leaked threads."""

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("MKLDNN_EXPLORER_SETTINGS", str(tmp_path / "settings.ini"))
    monkeypatch.setenv("MKLDNN_EXPLORER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MKLDNN_EXPLORER_NO_DIALOGS", "1")
    yield
    # Collect this test's dead widgets now, between tests. Left to a later automatic collection, one ran
    # inside a Qt disconnect while a new window was built, and a pyqtgraph menu's QComboBox destructor then
    # waited for the signal mutex that disconnect held: the whole run hung (seen once in CI, py-spy stack).
    import gc

    gc.collect()


@pytest.fixture
def make_window(qtbot):
    """Windows on an isolated settings file; each is closed at teardown and must leave no thread behind."""
    from explorer.gui.app import create_window, make_settings
    from explorer.gui.jobs import worker

    made = []

    def make(spec=None, options=None, csv_path=None, size=(1280, 800)):
        win = create_window(make_settings(), spec=spec, options=options, csv_path=csv_path)
        qtbot.addWidget(win)
        win.resize(*size)
        win.show()
        made.append(win)
        return win

    yield make
    for win in made:
        win.close()
    assert worker.live_threads() == 0, "a test left a QThread running"


TINY = "mb2ic16ih14oc16oh14kh3ph1"
