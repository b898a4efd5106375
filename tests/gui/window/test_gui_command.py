"""`mkldnn-explorer gui` as a user runs it: a subprocess end to end, no display, bad input."""

import os
import re
import struct
import subprocess
import sys

import pytest

from explorer.core.report.results import read_csv

TINY = "mb2ic16ih14oc16oh14kh3ph1"


def _env(tmp_path, **extra):
    import json

    # A 1920x1200 screen: the window never opens past the screen, and the offscreen default is 800x800.
    cfg = tmp_path / "screen.json"
    cfg.write_text(json.dumps({"screens": [{"name": "big", "x": 0, "y": 0, "width": 1920, "height": 1200,
                                            "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    env = dict(os.environ)
    env.update(QT_QPA_PLATFORM=f"offscreen:configfile={cfg}", MKLDNN_EXPLORER_SETTINGS=str(tmp_path / "s.ini"),
               MKLDNN_EXPLORER_CACHE=str(tmp_path / "cache"), MKLDNN_EXPLORER_NO_DIALOGS="1")
    env.update(extra)
    return env


def _png_size(path) -> tuple[int, int]:
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_gui_run_csv_screenshot_exit_when_done(tmp_path):
    csv_path, png = tmp_path / "g.csv", tmp_path / "g.png"
    p = subprocess.run(
        [sys.executable, "-m", "explorer", "gui", TINY, "--run", "--budget-ms", "30", "--csv", str(csv_path),
         "--screenshot", str(png), "--exit-when-done"],
        env=_env(tmp_path), capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0, p.stderr
    rows = read_csv(csv_path)
    assert len(rows) == 6 and all(r["status"] == "ok" for r in rows)
    assert {r["path"] for r in rows} == {"dense", "channels_last", "native", "mkldnn", "mkldnn_functional",
                                         "mkldnn_roundtrip"}
    w, h = _png_size(png)
    assert w >= 1280 and h >= 800
    last = p.stdout.strip().splitlines()[-1]
    m = re.fullmatch(r"event-loop stalls: p99 ([\d.]+) ms, max ([\d.]+) ms \((\d+) ticks\)", last)
    assert m, last
    assert int(m.group(3)) > 0


def test_gui_run_takes_the_command_lines_isa_and_allocator(tmp_path):
    """main dropped them: `gui DESC --isa avx2 --run` ran uncapped (aBcd16b on an AVX-512 CPU, the ISA field
    at "this CPU"). SSE4.1 is on every x86-64 CPU, and oneDNN's gemm kernel there gives plain layouts."""
    csv_path = tmp_path / "g.csv"
    p = subprocess.run(
        [sys.executable, "-m", "explorer", "gui", TINY, "--run", "--budget-ms", "20", "--paths", "dense,mkldnn",
         "--isa", "sse41", "--allocator", "default", "--csv", str(csv_path), "--exit-when-done"],
        env=_env(tmp_path), capture_output=True, text=True, timeout=180,
    )
    assert p.returncode == 0, p.stderr
    rows = read_csv(csv_path)
    assert [r["path"] for r in rows] == ["dense", "mkldnn"]
    assert {r["isa"] for r in rows} == {"sse41"} and {r["allocator"] for r in rows} == {"default"}
    assert "avx" not in rows[1]["conv_impl"], rows[1]["conv_impl"]


def test_gui_existing_csv_needs_force(tmp_path):
    csv_path = tmp_path / "g.csv"
    csv_path.write_text("keep\n")
    p = subprocess.run([sys.executable, "-m", "explorer", "gui", TINY, "--run", "--csv", str(csv_path),
                        "--exit-when-done"], env=_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "--force" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert csv_path.read_text() == "keep\n"


def test_gui_without_a_display_says_so(tmp_path):
    env = _env(tmp_path)
    for k in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        env.pop(k, None)
    p = subprocess.run([sys.executable, "-m", "explorer", "gui", TINY], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "QT_QPA_PLATFORM=offscreen" in lines[0] and "display" in lines[0]


@pytest.mark.parametrize("argv, words", [
    (["gui", "mb2ic16ih14"], "no oc"),
    (["gui", TINY, "--paths", "dense,bogus"], "unknown path 'bogus'"),
    (["gui", TINY, "--budget-ms", "0"], "budget"),
    (["gui", TINY, "--threads", "999"], "threads"),
    (["gui", TINY, "--dtype", "f64"], "dtype"),
    (["gui", TINY, "--size", "big"], "--size"),
    (["gui", "g3mb2ic16ih14oc16kh3"], "g=3"),
    (["gui", TINY, "--isa", "avx9000"], "avx9000"),
    (["gui", TINY, "--allocator", "hoard"], "hoard"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, monkeypatch, argv, words):
    from explorer.launch import main

    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err


def test_display_problem_rules():
    from explorer.gui.app import display_problem

    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    assert display_problem({"QT_QPA_PLATFORM": "minimal"}) is None
    assert display_problem({"DISPLAY": ":99"}) is None
    assert display_problem({"WAYLAND_DISPLAY": "wayland-0"}) is None
    if sys.platform.startswith("linux"):
        assert "QT_QPA_PLATFORM=offscreen" in display_problem({})
        assert display_problem({"QT_QPA_PLATFORM": "xcb"}) is not None


def _dark(png) -> float:
    """Share of dark pixels in a PNG (rendered back with Qt), for the theme check."""
    from PySide6.QtGui import QImage

    img = QImage(str(png))
    n = dark = 0
    for y in range(0, img.height(), 7):
        for x in range(0, img.width(), 7):
            n += 1
            dark += img.pixelColor(x, y).lightness() < 80
    return dark / n


def test_tab_model_is_accepted_and_shows_the_model_tab(make_window):
    from explorer.cli.gui import TABS
    from explorer.gui.app import select_tab

    assert "model" in TABS  # `gui --tab model` passes the parser
    win = make_window()
    assert select_tab(win, "model") and win.tabs.currentWidget() is win.model_tab
    assert select_tab(win, "compare") and win.tabs.tabText(win.tabs.currentIndex()) == "Compare"
    assert not select_tab(win, "nosuchtab")


def test_gui_sweep_and_batch_run_in_the_window_and_write_their_rows(tmp_path, qapp):
    """Issue 12: `gui DESC --vary ... --run --csv` runs the sweep in the window; `--batch FILE` a batch;
    `--theme dark --tab sweep --screenshot` shows a dark sweep chart."""
    s_csv, png = tmp_path / "s.csv", tmp_path / "s.png"
    p = subprocess.run(
        [sys.executable, "-m", "explorer", "gui", "mb1ic8ih6oc8kh3ph1", "--vary", "g=divisors", "--run",
         "--paths", "dense,mkldnn", "--budget-ms", "5", "--no-trace", "--csv", str(s_csv), "--theme", "dark",
         "--tab", "sweep", "--screenshot", str(png), "--exit-when-done"],
        env=_env(tmp_path), capture_output=True, text=True, timeout=180,
    )
    assert p.returncode == 0, p.stderr
    rows = read_csv(s_csv)
    assert sorted({r["vary"] for r in rows}) == ["g=1", "g=2", "g=4", "g=8"] and len(rows) == 8
    assert _dark(png) > 0.5  # the dark theme, sweep charts included
    batch = tmp_path / "net.txt"
    batch.write_text('mb1ic8ih6oc8kh3ph1n"net:a*3"\nmb1ic8ih6oc16kh1ph0n"net:b"\n')
    b_csv = tmp_path / "b.csv"
    p = subprocess.run(
        [sys.executable, "-m", "explorer", "gui", "--batch", str(batch), "--run", "--paths", "dense,mkldnn",
         "--budget-ms", "5", "--no-trace", "--csv", str(b_csv), "--exit-when-done"],
        env=_env(tmp_path), capture_output=True, text=True, timeout=180,
    )
    assert p.returncode == 0, p.stderr
    rows = read_csv(b_csv)
    assert [r["name"] for r in rows] == ["net:a*3", "net:a*3", "net:b", "net:b"]
    assert "each layer x its *N count (2 layers, 4 in the net)" in p.stdout


def test_screenshot_alone_takes_the_picture_and_exits(tmp_path):
    """Issue 35: `gui --screenshot x.png` without --exit-when-done never wrote the picture and never exited."""
    png = tmp_path / "x.png"
    p = subprocess.run([sys.executable, "-m", "explorer", "gui", TINY, "--screenshot", str(png)],
                       env=_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    w, h = _png_size(png)
    assert w > 0 and h > 0
