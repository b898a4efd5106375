"""Issue 33, the results writer: one atomic start (the header, a resume's rows), then one appended line per row;
a torn last line is dropped when the CSV is read, with one sentence; one writer per CSV (a lock beside it)."""

import os
import subprocess
import sys

import pytest

from explorer.core import files as files_mod
from explorer.core.errors import InputError
from explorer.core.output_lock import lock_output, lock_path
from explorer.core.problem.spec import ConvSpec
from explorer.core.report.results import CsvSink, Result, read_csv, whole_rows_text, write_rows


def _result(oc=8, error=""):
    spec = ConvSpec(mb=1, ic=8, ih=8, iw=8, oc=oc, kh=3, kw=3, ph=1, pw=1)
    return Result(spec=spec, path="dense", threads=1, median_ms=1.5, samples=3, error=error)


def _counting_whole_writes(monkeypatch):
    calls = []
    real = files_mod.atomic_write_text

    def write(path, text):
        calls.append(text.count("\n"))
        return real(path, text)

    monkeypatch.setattr(files_mod, "atomic_write_text", write)
    return calls


def test_rows_are_appended_to_the_same_file_not_rewritten(tmp_path, monkeypatch):
    calls = _counting_whole_writes(monkeypatch)
    out = tmp_path / "r.csv"
    sink = CsvSink(out)
    sink.flush()
    inode = os.stat(out).st_ino
    for oc in (8, 16, 24, 32):
        sink.add(_result(oc))
        assert os.stat(out).st_ino == inode  # an atomic rewrite would have renamed a new file over it
    assert calls == [1]  # the header's one whole write; every row after it an append
    assert [r["oc"] for r in read_csv(out)] == [8, 16, 24, 32] and sink.count == 4
    sink.close()


def test_a_resume_is_written_once_whole_then_appended(tmp_path, monkeypatch):
    out = tmp_path / "r.csv"
    first = CsvSink(out)
    for oc in (8, 16):
        first.add(_result(oc))
    first.close()
    with open(out, "a") as f:
        f.write(out.read_text().splitlines()[1][:50])  # a crash mid-row
    from explorer.core.fleet.pieces import resume_rows

    _, rows = resume_rows(out)
    calls = _counting_whole_writes(monkeypatch)
    sink = CsvSink(out, rows=rows)
    assert sink.count == 2  # the resumed rows are on disk already
    sink.flush()
    for oc in (24, 32, 40):
        sink.add(_result(oc))
    assert calls == [3]  # header + the 2 resumed rows, once, without the torn line
    assert [r["oc"] for r in read_csv(out)] == [8, 16, 24, 32, 40] and sink.count == 5
    sink.close()


def test_a_torn_last_line_is_dropped_with_one_sentence(tmp_path):
    out = tmp_path / "r.csv"
    sink = CsvSink(out)
    sink.add(_result(8))
    sink.add(_result(16, error='line one\nline "two"'))  # a quoted cell with a line break in it
    sink.close()
    good = out.read_text()
    last = good[good.index("\n") + 1:].split("\n", 1)[1]  # the second row, over two physical lines
    for cut in (30, last.index("\n") + 5, len(last) - 3):  # in a cell, past the quoted line break, near its end
        out.write_text(good[: len(good) - len(last)] + last[:cut])
        notes: list[str] = []
        rows = read_csv(out, notes)
        assert [r["oc"] for r in rows] == [8], cut
        assert len(notes) == 1 and "dropped a torn last line (line 3" in notes[0] and "run again" in notes[0]


def test_a_complete_last_line_without_its_newline_is_kept(tmp_path):
    """A spreadsheet may end the file without a newline: the last row has all its cells, it is no crash."""
    out = tmp_path / "r.csv"
    sink = CsvSink(out)
    sink.add(_result(8))
    sink.add(_result(16))
    sink.close()
    out.write_text(out.read_text().rstrip("\n"))
    notes: list[str] = []
    assert [r["oc"] for r in read_csv(out, notes)] == [8, 16] and not notes
    assert whole_rows_text(out, notes) == out.read_text() and not notes


def _holder(tmp_path, target):
    """Another process holding target's lock until its stdin closes."""
    code = ("import sys; from explorer.core.output_lock import lock_output; "
            f"l = lock_output({str(target)!r}); print('held', flush=True); sys.stdin.read()")
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_every_writer_of_a_csv_another_process_writes_is_refused_naming_it(tmp_path):
    out = tmp_path / "r.csv"
    holder = _holder(tmp_path, out)
    try:
        for write in (lambda: CsvSink(out), lambda: write_rows(out, [_result()]),  # a sink; the window's Save
                      lambda: files_mod.check_writable(out)):
            with pytest.raises(InputError, match=rf"is being written by another process \(pid {holder.pid}: "):
                write()
        assert not out.exists()
    finally:
        holder.stdin.close()
        holder.wait()
    write_rows(out, [_result()])  # the holder ended: free again
    assert len(read_csv(out)) == 1 and not os.path.exists(lock_path(out))


def test_a_killed_writers_lock_file_does_not_block_a_rerun(tmp_path):
    out = tmp_path / "r.csv"
    holder = _holder(tmp_path, out)
    holder.kill()
    holder.wait()
    assert os.path.exists(lock_path(out))  # left behind by kill -9, but no longer locked
    files_mod.check_writable(out)
    sink = CsvSink(out)
    sink.add(_result())
    assert f"pid={os.getpid()}" in open(lock_path(out)).read()
    sink.close()
    assert not os.path.exists(lock_path(out))


def test_holds_nest_within_one_process_and_the_last_release_frees_the_file(tmp_path):
    out = tmp_path / "r.csv"
    plan = lock_output(out)
    sink = CsvSink(out)  # the plan held it first (a resume); the sink writes under the same lock
    sink.add(_result())
    sink.close()
    assert os.path.exists(lock_path(out))
    plan.release()
    assert not os.path.exists(lock_path(out))


def test_a_file_of_someone_else_at_the_lock_path_is_never_overwritten(tmp_path):
    out = tmp_path / "r.csv"
    other = tmp_path / ".r.csv.lock"
    other.write_text("my notes\n")
    with pytest.raises(InputError, match="not the tool's lock file"):
        CsvSink(out)
    assert other.read_text() == "my notes\n" and not out.exists()
