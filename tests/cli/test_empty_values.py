"""An option or argument given an empty value is refused in one sentence (exit 2), before any work: before,
`--input ''`, `--resume ''`, `--cluster ''`, `--shard ''`, `--dtype ''` and `--isa ''` ran the default, and
an empty batch file or CSV was "cannot open '.': it is a folder"."""

import pytest

from explorer.cli import main

FAST = ["--budget-ms", "2", "--threads", "1", "--paths", "dense", "--no-trace"]


@pytest.mark.parametrize("argv,named", [
    (["model", "tiny", "--input", "", "--modes", "nchw", *FAST], "--input is empty"),
    (["model", "tiny", "--input", "1,3,8,8", "--input", " ", "--modes", "nchw", *FAST], "--input is empty"),
    (["batch", "quick", "--mb", "1", "--resume", "", *FAST], "--resume is empty"),
    (["batch", "quick", "--mb", "1", "--cluster", "", *FAST], "--cluster is empty"),
    (["batch", "quick", "--mb", "1", "--shard", "", *FAST], "--shard is empty"),
    (["run", "mb1ic8ih8oc8kh3ph1", "--dtype", "", *FAST], "--dtype is empty"),
    (["run", "mb1ic8ih8oc8kh3ph1", "--isa", "", *FAST], "--isa is empty"),
    (["batch", "", *FAST], "the batch file is empty"),
    (["compare", "", "b.csv"], "the first CSV is empty"),
    (["merge", "a.csv", "", "--csv", "m.csv"], "a CSV to merge is empty"),
], ids=["input", "input-blank-second", "resume", "cluster", "shard", "dtype", "isa", "batch-file", "compare",
        "merge"])
def test_an_empty_value_is_one_sentence_and_exit_2(argv, named, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.count("\n") == 0 and named in err and "Traceback" not in err, err
    assert captured.out == "" and list(tmp_path.iterdir()) == []  # nothing ran, nothing written
