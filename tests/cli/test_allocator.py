"""--allocator: the measuring process really runs with the chosen allocator; one sentence when it cannot."""

import pytest

from explorer.cli import main
from explorer.core.measure import allocator
from explorer.core.report.results import read_csv

TINY = ["mb1ic8ih6oc8kh3ph1", "--paths", "dense", "--budget-ms", "5", "--no-trace"]


def _run(tmp_path, *extra):
    out = tmp_path / "r.csv"
    assert main(["run", *TINY, "--csv", str(out), *extra]) == 0
    return read_csv(out)


def test_default_setting_is_tuned_and_is_what_the_child_ran_with(tmp_path, capsys):
    rows = _run(tmp_path)
    assert [r["allocator"] for r in rows] == ["tuned"]  # read back from the measuring process's environment
    assert "MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=1000000000" in capsys.readouterr().err


def test_glibc_as_it_comes(tmp_path):
    assert [r["allocator"] for r in _run(tmp_path, "--allocator", "default")] == ["default"]


@pytest.mark.parametrize("name", ["jemalloc", "tcmalloc"])
def test_preloaded_allocator_is_mapped_in_the_measuring_process(tmp_path, name):
    if allocator.find_library(name) is None:
        pytest.skip(f"{name} is not installed here (Debian: {allocator._PACKAGES[name]})")
    # `current()` in the child reports it only when the loader really mapped the library
    assert [r["allocator"] for r in _run(tmp_path, "--allocator", name)] == [name]


def test_missing_library_is_one_sentence_and_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(allocator, "find_library", lambda name: None)
    out = tmp_path / "r.csv"
    assert main(["run", *TINY, "--allocator", "jemalloc", "--csv", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "jemalloc is not installed on this machine" in err[0] and "libjemalloc2" in err[0]
    assert not out.exists()


def test_unknown_allocator_exits_2(capsys):
    assert main(["run", *TINY, "--allocator", "bogus"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown allocator 'bogus'" in err[0]


def test_allocator_is_sweepable_like_threads(tmp_path):
    out = tmp_path / "s.csv"
    assert main(["sweep", *TINY, "--vary", "allocator=tuned,default", "--csv", str(out)]) == 0
    rows = read_csv(out)
    assert [(r["vary"], r["allocator"]) for r in rows] == [("allocator=tuned", "tuned"), ("allocator=default", "default")]


def test_sweeping_a_missing_allocator_is_refused_before_any_work(monkeypatch, capsys):
    monkeypatch.setattr(allocator, "find_library", lambda name: None)
    assert main(["sweep", *TINY, "--vary", "allocator=tuned,tcmalloc"]) == 2
    assert "tcmalloc is not installed" in capsys.readouterr().err


def test_env_for_clears_what_another_setting_set():
    env = allocator.env_for("default")
    assert env["LD_PRELOAD"] is None and env["MALLOC_MMAP_THRESHOLD_"] is None and env[allocator.ENV_NAME] == "default"
    assert allocator.env_for("tuned")["MALLOC_TRIM_THRESHOLD_"] == "1000000000"
