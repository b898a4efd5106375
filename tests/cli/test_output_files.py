"""Issue 23, the output layer: the tool writes only its own regular files, one output per path, and a write
that fails (a full disk) keeps every row it could, says how many in one sentence, saves a recovery copy
and exits 3."""

import csv
import errno
import io
import json
import os
import stat
import subprocess

import pytest

from explorer.cli import main
from explorer.cli.common import EXIT_BAD_INPUT, EXIT_FAULT
from explorer.core import files as files_mod
from explorer.core.jobs import run as runner_mod
from explorer.core.jobs.events import PathFinished
from explorer.core.report.results import read_csv

TINY = "mb1ic8ih6oc8kh3ph1"
FAST = ["--paths", "dense", "--budget-ms", "5", "--no-trace", "--threads", "1"]


@pytest.fixture(autouse=True)
def _in_process(monkeypatch, tmp_path):
    monkeypatch.setenv("MKLDNN_EXPLORER_IN_PROCESS", "1")
    monkeypatch.setenv("MKLDNN_EXPLORER_CACHE", str(tmp_path / "cache"))


def _snapshot(p):
    st = os.lstat(p)
    return (stat.S_IFMT(st.st_mode), st.st_rdev, st.st_size, st.st_ino)


def _device(tmp_path):
    """A private copy of /dev/full (char 1,7), so a test that fails never replaces the real one."""
    dev = tmp_path / "full"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except (PermissionError, OSError):
        pytest.skip("cannot make a device node here (not root, or a nodev folder)")
    return dev


@pytest.mark.parametrize("kind", ["device", "fifo", "symlink"])
@pytest.mark.parametrize("option", ["--csv", "--timeline"])
def test_force_never_replaces_a_device_fifo_or_symlink(tmp_path, capsys, kind, option):
    if kind == "device":
        target = _device(tmp_path)
    elif kind == "fifo":
        target = tmp_path / "pipe.csv"
        os.mkfifo(target)
    else:
        real = tmp_path / "real.csv"
        real.write_text("mine\n")
        target = tmp_path / "link.csv"
        target.symlink_to(real)
    before = _snapshot(target)
    assert main(["run", TINY, *FAST, option, str(target), "--force"]) == EXIT_BAD_INPUT
    assert _snapshot(target) == before
    if kind == "symlink":
        assert (tmp_path / "real.csv").read_text() == "mine\n"  # not written through either
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(target) in err[0] and "Traceback" not in err[0]
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_the_write_itself_refuses_a_path_that_became_special(tmp_path):
    """Checked before the run and again at the rename: a path swapped for a FIFO meanwhile is not replaced."""
    p = tmp_path / "x.csv"
    os.mkfifo(p)
    with pytest.raises(ValueError, match="FIFO"):
        files_mod.atomic_write_text(p, "a\n")
    assert stat.S_ISFIFO(os.lstat(p).st_mode)


@pytest.mark.parametrize("argv", [
    ["run", TINY, *FAST, "--timeline", "{d}/t.json", "--csv", "{d}/t.json"],
    ["run", TINY, *FAST, "--timeline", "{d}/t.json", "--csv", "{d}/./sub/../t.json"],
    ["sweep", TINY, "--vary", "mb=1,2", *FAST, "--timeline", "{d}/s.csv", "--csv", "{d}/s.csv"],
])
def test_two_outputs_on_one_path_are_refused(tmp_path, capsys, argv):
    (tmp_path / "sub").mkdir()
    argv = [a.format(d=tmp_path) for a in argv]
    assert main(argv) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "both name" in err[0]
    assert not (tmp_path / "t.json").exists() and not (tmp_path / "s.csv").exists()


@pytest.mark.parametrize("cmd", [["run", TINY, *FAST], ["batch", "quick", *FAST], ["model", "tiny"]])
def test_an_empty_csv_path_is_refused(capsys, cmd):
    assert main([*cmd, "--csv", ""]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--csv is empty" in err[0]


def _batch(tmp_path, n=3):
    f = tmp_path / "b.txt"
    f.write_text("".join(f"mb1ic8ih6oc{8 * (i + 1)}kh3ph1\n" for i in range(n)))
    return f


def _failing_after(monkeypatch, good_appends):
    """The CSV's row appends succeed `good_appends` times; then the disk fills in the middle of a row: half of
    it reaches the file, the rest fails with ENOSPC (the real append_text runs, with a short os.write)."""
    real = files_mod.append_text
    calls = {"n": 0}

    def append(path, text):
        if os.path.basename(path) == "out.csv":
            calls["n"] += 1
            if calls["n"] > good_appends:
                wrote = {"n": 0}
                real_write = os.write

                def short_write(fd, data):
                    if wrote["n"]:
                        raise OSError(errno.ENOSPC, "No space left on device")
                    wrote["n"] = real_write(fd, bytes(data[: len(data) // 2]))
                    return wrote["n"]

                with pytest.MonkeyPatch.context() as m:
                    m.setattr(files_mod.os, "write", short_write)
                    return real(path, text)
        return real(path, text)

    monkeypatch.setattr(files_mod, "append_text", append)


def test_a_full_disk_mid_batch_keeps_the_rows_written_and_says_how_many(tmp_path, monkeypatch, capsys):
    """Simulated ENOSPC in the middle of the 3rd row: the header and 2 rows stay on disk, whole; the half row
    that got written is cut off again (no torn line)."""
    _failing_after(monkeypatch, 2)
    out = tmp_path / "out.csv"
    assert main(["batch", str(_batch(tmp_path)), *FAST, "--csv", str(out)]) == EXIT_FAULT
    cap = capsys.readouterr()
    last = cap.err.strip().splitlines()[-1]
    assert "No space left on device" in last and "2 of 3 rows are safe" in last
    assert "wrote 3 rows" not in cap.err
    assert len(read_csv(out)) == 2  # the file on disk parses and holds exactly what the sentence says
    assert out.read_text().endswith("\n") and "dropped a torn" not in capsys.readouterr().err
    rec = list((tmp_path / "cache" / "recovered").iterdir())
    assert len(rec) == 1 and str(rec[0]) in last
    assert [r["oc"] for r in read_csv(rec[0])] == [8, 16, 24]
    assert len([ln for ln in cap.out.splitlines() if ln[:1].isdigit() and " dense " in ln]) == 3  # every row


def test_recovery_goes_to_stdout_when_the_cache_cannot_be_written(tmp_path, monkeypatch, capsys):
    _failing_after(monkeypatch, 0)
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    out = tmp_path / "out.csv"
    assert main(["batch", str(_batch(tmp_path, 1)), *FAST, "--csv", str(out)]) == EXIT_FAULT
    cap = capsys.readouterr()
    assert "0 of 1 rows are safe" in cap.err and "stdout" in cap.err
    text = cap.out[cap.out.index("desc,name"):]
    assert len(list(csv.DictReader(io.StringIO(text)))) == 1


def test_model_csv_count_is_the_count_on_disk(tmp_path, monkeypatch, capsys):
    real = files_mod.atomic_write_text

    def write(path, text):
        if os.path.basename(path) == "m.csv":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, text)

    monkeypatch.setattr(files_mod, "atomic_write_text", write)
    out = tmp_path / "m.csv"
    rc = main(["model", "tiny", "--threads", "1", "--paths", "dense", "--budget-ms", "5", "--modes", "nchw",
               "--mode-budget-ms", "20", "--no-trace", "--csv", str(out)])
    cap = capsys.readouterr()
    assert rc == EXIT_FAULT and "wrote" not in cap.err and not out.exists()
    assert "0 of 1 rows are safe" in cap.err.strip().splitlines()[-1]


def _tmpfs(tmp_path, size="64k"):
    d = tmp_path / "tiny"
    d.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(d)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()}")
    return d


def _fill(d, leave=0):
    """Fill the tmpfs d, then free `leave` bytes."""
    fd = os.open(d / "fill", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 1024)
    except OSError:
        pass
    finally:
        os.close(fd)
    if leave:
        os.truncate(d / "fill", os.path.getsize(d / "fill") - leave)


def test_a_real_full_tmpfs_keeps_every_row_somewhere(tmp_path, capsys):
    """A real 64 KiB tmpfs, filled to two free pages (the writer's lock file, the CSV's first page): the rows
    are appended until the page is full, and the row that no longer fits is cut off, not left torn."""
    d = _tmpfs(tmp_path)
    try:
        _fill(d, leave=2 * 4096)
        out = d / "out.csv"
        rc = main(["batch", str(_batch(tmp_path, 14)), *FAST, "--csv", str(out)])
        cap = capsys.readouterr()
        assert rc == EXIT_FAULT
        last = cap.err.strip().splitlines()[-1]
        import re

        m = re.search(r"(\d+) of (\d+) rows are safe in it", last)
        assert m and "No space left" in last  # the run stops at the fault: the rows finished by then
        assert 1 <= int(m.group(1)) == int(m.group(2)) - 1  # some rows fit; the one that did not is the last
        assert len(read_csv(out)) == int(m.group(1))  # what it says is on disk is on disk, and parses
        assert out.read_text().endswith("\n")  # no part of the failed row is left
        rec = [p for p in (tmp_path / "cache" / "recovered").iterdir()]
        assert len(read_csv(rec[0])) == int(m.group(2)) >= 1 and str(rec[0]) in last
    finally:
        subprocess.run(["umount", str(d)], check=False)


def test_a_full_tmpfs_for_the_timeline_is_a_fault_with_a_copy(tmp_path, capsys):
    d = _tmpfs(tmp_path, "4k")
    try:
        _fill(d)
        rc = main(["run", TINY, *FAST, "--timeline", str(d / "t.json")])
        cap = capsys.readouterr()
        assert rc == EXIT_FAULT and "t.json" in cap.err.strip().splitlines()[-1]
        rec = list((tmp_path / "cache" / "recovered").iterdir())
        assert json.loads(rec[0].read_text())["traceEvents"]
    finally:
        subprocess.run(["umount", str(d)], check=False)


def test_rows_reach_disk_as_they_finish(tmp_path, monkeypatch):
    """Each finished row is in the target file before the next point starts (read it from inside the run)."""
    out = tmp_path / "out.csv"
    seen = []
    real = runner_mod.iter_run

    def watching(spec, *a, **k):
        seen.append(len(read_csv(out)) if out.exists() else None)
        yield from real(spec, *a, **k)

    monkeypatch.setattr(runner_mod, "iter_run", watching)
    assert main(["batch", str(_batch(tmp_path)), *FAST, "--csv", str(out)]) == 0
    assert seen == [0, 1, 2]


def test_json_output_is_strict(tmp_path, monkeypatch, capsys):
    """A figure that is not a number is null in --json, never a bare NaN."""
    real = runner_mod.iter_run

    def nan_err(spec, *a, **k):
        for ev in real(spec, *a, **k):
            if isinstance(ev, PathFinished):
                ev.result.max_abs_err = float("nan")
                ev.result.gflops = float("inf")
            yield ev

    monkeypatch.setattr(runner_mod, "iter_run", nan_err)
    assert main(["run", TINY, *FAST, "--json"]) == 0
    text = capsys.readouterr().out
    assert "NaN" not in text and "Infinity" not in text
    row = json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c} in JSON"))["results"][0]
    assert row["max_abs_err"] in ("", None) and row["gflops"] in ("", None)  # main wrote "inf"
