"""Every bad input the command line can get: exit 2, one clear line on stderr (at most three), no traceback,
and nothing on disk changed. The GUI's equivalents are in tests/gui (field marked, Run disabled)."""

import pytest

from explorer.launch import main  # the console script's entry: every command, `gui` too

D = "mb2ic16ih14oc16oh14kh3ph1"

BAD = {
    # descriptors
    "malformed descriptor": (["run", "mb2ic16ih14oc16kh3$"], "cannot read"),
    "unknown key": (["run", "mb2ic16ih14oc16kh3zz1"], "unknown key"),
    "missing ih": (["run", "mb2ic16oc16kh3"], "ih"),
    "missing kh": (["run", "mb2ic16ih14oc16"], "kh"),
    # benchdnn's own refusals (a given oh that only implies another right pad is accepted, as benchdnn does)
    "w-values without kw": (["run", "mb2ic16ih14iw14oc16ow3kh3ph1"], "kw (kernel width) was not given"),
    "negative left pad": (["run", "mb2ic16ih14oc16oh3kh3"], "negative left padding"),
    "zero size": (["run", "mb2ic0ih14oc16kh3"], "ic"),
    "negative size": (["run", "mb2ic-4ih14oc16kh3"], "ic"),
    "groups not dividing ic": (["run", D + "g3"], "g=3"),
    "groups not dividing oc": (["run", "g2mb2ic16ih14oc15kh3"], "oc=15"),
    "kernel larger than padded input": (["run", "mb2ic16ih4oc16kh9"], "kh=9"),
    "stride 0": (["run", "mb2ic16ih14oc16kh3sh0"], "sh"),
    "number too large": (["run", "mb2ic16ih99999999999oc16kh3"], "too large"),
    "more memory than the machine has": (["run", "mb256ic256ih224oc256kh3ph1"], "available"),
    "3-D descriptor": (["run", "mb2ic16id8ih14oc16kh3kd3"], "3-D"),
    # options
    "unknown path": (["run", D, "--paths", "dense,fast"], "fast"),
    "empty paths": (["run", D, "--paths", ","], "no path"),
    "threads 0": (["run", D, "--threads", "0"], "threads"),
    "threads negative": (["run", D, "--threads", "-2"], "threads"),
    "threads above cores": (["run", D, "--threads", "4096"], "threads"),
    "threads not a number": (["run", D, "--threads", "two"], "whole number"),
    "budget 0": (["run", D, "--budget-ms", "0"], "budget"),
    "budget not a number": (["run", D, "--budget-ms", "fast"], "number"),
    "dtype unknown": (["run", D, "--dtype", "f64"], "dtype"),
    "unknown option": (["run", D, "--turbo"], "turbo"),
    "unknown command": (["benchmark", D], "benchmark"),
    # --vary
    "vary unknown field": (["sweep", D, "--vary", "q=1,2"], "q"),
    "vary empty list": (["sweep", D, "--vary", "mb="], "empty"),
    "vary backwards range": (["sweep", D, "--vary", "mb=64:1:x2"], "backwards"),
    "vary zero step": (["sweep", D, "--vary", "ic=16:64:+0"], "ic"),
    "vary ratio 1": (["sweep", D, "--vary", "mb=1:8:x1"], "x1"),
    "vary not numbers": (["sweep", D, "--vary", "mb=a,b"], "mb"),
    "vary too many points": (["sweep", D, "--vary", "ic=1:100000:+1"], "limit"),
    "vary without =": (["sweep", D, "--vary", "mb"], "mb"),
    "sweep without vary": (["sweep", D], "--vary"),
    # layout tags and dims
    "malformed tag": (["layout", "--tag", "aBcd16", "--dims", "2,17,5,4"], "aBcd16"),
    "tag/dims mismatch": (["layout", "--tag", "abcd", "--dims", "2,17,5"], "dims"),
    "dims not numbers": (["layout", "--tag", "abcd", "--dims", "2,x,5,4"], "dims"),
    "offset outside dims": (["layout", "--tag", "abcd", "--dims", "2,17,5,4", "--offset", "2,0,0,0"], "offset"),
    "layout of an unknown path": (["layout", D, "--path", "turbo"], "turbo"),
    # files
    "csv in a missing folder": (["run", D, "--csv", "/nonexistent/dir/out.csv"], "does not exist"),
    "csv is a folder": (["run", D, "--csv", "/tmp"], "folder"),
    "batch file missing": (["batch", "/nonexistent/layers.txt"], "no such file"),
    "batch name unknown": (["batch", "resnet_51"], "no shipped batch"),
    "compare file missing": (["compare", "/nonexistent/a.csv", "/nonexistent/b.csv"], "no such file"),
    "compare foreign file": (["compare", "/etc/passwd", "/etc/passwd"], "line 1"),
    # the desktop app's command line, validated before any window opens
    "gui bad descriptor": (["gui", D + "g3"], "g=3"),
    "gui bad size": (["gui", D, "--size", "12by9"], "size"),
}


@pytest.mark.parametrize("argv, words", list(BAD.values()), ids=list(BAD))
def test_bad_input_exits_2_with_a_clear_line(argv, words, capsys):
    assert main(argv) == 2
    cap = capsys.readouterr()
    err = cap.err.strip()
    assert err, "no message"
    assert 1 <= len(err.splitlines()) <= 3 and "Traceback" not in err
    assert words.lower() in err.lower(), err
    assert not cap.out.strip()  # nothing half-printed on stdout


def test_at_least_25_bad_inputs():
    assert len(BAD) >= 25


def test_existing_output_is_not_overwritten_without_force(tmp_path, capsys):
    out = tmp_path / "keep.csv"
    out.write_text("precious\n")
    for argv in (["run", D, "--paths", "dense", "--budget-ms", "5", "--csv", str(out)],
                 ["sweep", D, "--vary", "mb=1,2", "--paths", "dense", "--budget-ms", "5", "--csv", str(out)],
                 ["batch", "quick", "--paths", "dense", "--budget-ms", "5", "--csv", str(out)]):
        assert main(argv) == 2
        assert "--force" in capsys.readouterr().err
        assert out.read_text() == "precious\n"


@pytest.mark.parametrize("argv", [
    ["batch", "{fifo}", "--list"],
    ["compare", "{fifo}", "{fifo}"],
    ["batch", "quick", "--resume", "{fifo}"],
    ["sweep", D, "--vary", "g=1,2", "--resume", "{fifo}"],
])
def test_a_fifo_given_as_an_input_is_one_sentence_not_a_wait_forever(argv, tmp_path, capsys):
    """#33: every input the tool reads is checked as its outputs are: a FIFO (or a device) as a batch file or a
    CSV to read once waited for a writer that never came (the command hung until killed)."""
    import os
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # were the tool to open the FIFO, this writer would let it go on (and the test fail on the exit code)
    # rather than hang the suite
    def unblock():
        import time

        time.sleep(20)
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        except OSError:
            pass

    threading.Thread(target=unblock, daemon=True).start()
    assert main([a.format(fifo=fifo) for a in argv]) == 2
    err = capsys.readouterr().err
    assert "FIFO" in err and "Traceback" not in err and len(err.strip().splitlines()) <= 3, err
