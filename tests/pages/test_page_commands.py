"""Every command the pages show in a fenced block runs, and exits (and prints) as the page says.

A new user copies these lines first, so each one is run here as the user would, in a fresh process and a
fresh folder per page, with one change: budgets are made small (the tool's figures are not checked, only
that the command does what the page promises). What cannot run on one machine as written is made to: the
cluster lines start a real scheduler and two real workers on 127.0.0.1, `HOST_A` is that scheduler (or, for
`--against`, one worker's host), and their batches and models time one path (`--paths dense --no-trace`);
the files a line names without making them (`mypkg.net:make`, `machineA.csv`, `corpus.txt`) are made the
way a user would make them, before the block runs. Installing lines are the one thing left out: `.ci/run`
runs the README's test line from a fresh clone, and `test_only_install_lines_are_left_out` keeps that list
from growing.

Runs once in CI (tests/pages is not among the tests `.ci/run` repeats under ISA caps).
"""

from __future__ import annotations

import csv
import dataclasses
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "resources" / "docs").glob("*.md"))]
SMALL = {"--budget-ms": "5", "--mode-budget-ms": "100"}
TIMED = {"run", "sweep", "batch", "model", "gui"}
TIMEOUT = 1800  # a loaded machine (the suite's other tests) can be slow; CI's quiet one takes far less


@dataclass(frozen=True)
class Command:
    page: str
    line: int
    text: str  # as the page writes it, without its trailing comment
    says: str = ""  # what the page says it prints: a `# last lines: "..."` comment under it ("..." = any text)

    @property
    def words(self) -> list[str]:
        return shlex.split(self.text)

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def _strip_comment(line: str) -> str:
    """The shell line without its `# ...` comment (a '#' outside quotes after a space)."""
    quote = None
    for i, ch in enumerate(line):
        if ch in "'\"" and quote in (None, ch):
            quote = None if quote else ch
        elif ch == "#" and quote is None and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def page_commands(page: Path) -> list[Command]:
    text = page.read_text()
    out = []
    for m in re.finditer(r"^```(bash|sh|shell|console)?\n(.*?)^```", text, re.S | re.M):
        first = text[: m.start(2)].count("\n") + 1
        if m.group(1) is None and not m.group(2).lstrip().startswith(("mkldnn-explorer", ".venv/", "python")):
            continue  # an unlabelled block of output, not commands
        for k, raw in enumerate(m.group(2).splitlines()):
            said = re.match(r'\s*# last lines: "(.*?)"', raw)
            if said and out:
                out[-1] = dataclasses.replace(out[-1], says=said.group(1))
            line = _strip_comment(raw)
            if line:
                out.append(Command(str(page.relative_to(ROOT)), first + k, line))
    return out


def prints_what_it_says(says: str, out: str) -> bool:
    """`says` with each "..." standing for any text, found in `out`."""
    pieces = [re.escape(p) for p in says.split("...")]
    return re.search(".*?".join(pieces), out, re.S) is not None


ALL = [c for p in PAGES for c in page_commands(p)]


def is_install(c: Command) -> bool:
    return c.words[:3] == ["python3", "-m", "venv"]


def is_cluster_setup(c: Command) -> bool:
    return c.words[:2] in (["dask", "scheduler"], ["dask", "worker"])


def uses_cluster(c: Command) -> bool:
    return "HOST_A" in c.text


def test_the_pages_have_commands_to_run():
    names = {c.page for c in ALL}
    assert {"README.md", "resources/docs/cli.md", "resources/docs/planner.md"} <= names, names
    assert len([c for c in ALL if not is_install(c)]) >= 20


def test_only_install_lines_are_left_out():
    # an install line is the one kind this file does not run: each must be an install of this repo
    for c in filter(is_install, ALL):
        assert c.page == "README.md" and "pip install" in c.text and "torch==2.13.0" in c.text, c
    left_out = [c for c in ALL if not (is_install(c) or is_cluster_setup(c) or c.words[0].endswith("mkldnn-explorer"))]
    assert not left_out, f"commands this test does not know how to run: {left_out}"


# ---- running a command as the user would -------------------------------------------------------------
def _env(folder: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "MKLDNN_EXPLORER_IN_PROCESS"}
    env.update(QT_QPA_PLATFORM="offscreen", MKLDNN_EXPLORER_SETTINGS=str(folder / "settings.ini"),
               MKLDNN_EXPLORER_NO_DIALOGS="1", PYTHONPATH=str(folder))
    return env


def argv_of(c: Command, cluster: dict | None = None) -> list[str]:
    """The page's words, made runnable here: this interpreter, small budgets, the local cluster."""
    words = c.words
    words = [sys.executable, "-m", "explorer", *words[1:]]
    sub = words[3] if len(words) > 3 else ""
    if sub in TIMED:
        for flag, value in SMALL.items():
            if flag == "--mode-budget-ms" and sub != "model":
                continue
            if flag in words:
                words[words.index(flag) + 1] = value
            else:
                words += [flag, value]
    if sub == "gui" and "--exit-when-done" not in words and "--screenshot" not in words:
        words += ["--exit-when-done"]  # the user closes the window; here it closes itself when the run ends
    if cluster:
        # what these lines promise is the fleet's (each problem once, or once per host; compare; resume), not
        # the paths: one path without the traced call keeps ResNet-50's list on two workers to minutes
        if sub in ("batch", "model") and "--paths" not in words:
            words += ["--paths", "dense", "--no-trace"]
        words = [w.replace("tcp://HOST_A:8786", cluster["address"]) for w in words]
        if "--against" in words:
            words[words.index("--against") + 1] = cluster["host"]
    return words


def expected(c: Command) -> tuple[int, str]:
    """(exit status, a word stderr must hold) as the page says. The pages promise 0 everywhere except where a
    line needs what this machine may lack, and there they say what happens instead."""
    if "allocator=" in c.text and "jemalloc" in c.text and not _has_jemalloc():
        return 2, "libjemalloc2"  # cli.md: "Without it that sweep refuses at once, naming the package."
    if "--isa avx2" in c.text and not _cpu_has("avx2"):
        return 2, "avx2"  # README: --isa cannot add what the CPU lacks
    return 0, ""


def _has_jemalloc() -> bool:
    from explorer.core.measure.allocator import find_library

    return find_library("jemalloc") is not None


def _cpu_has(flag: str) -> bool:
    try:
        return flag in Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False


def run_command(c: Command, folder: Path, cluster: dict | None = None) -> subprocess.CompletedProcess:
    argv = argv_of(c, cluster)
    done = subprocess.run(argv, cwd=folder, env=_env(folder), capture_output=True, text=True, timeout=TIMEOUT)
    code, word = expected(c)
    shown = f"{c.id}: {c.text}\nran: {shlex.join(argv[2:])}\nexit {done.returncode}\n{done.stderr[-3000:]}"
    assert done.returncode == code, shown
    assert word in done.stderr, shown
    assert "Traceback" not in done.stderr, shown
    if c.says:
        assert prints_what_it_says(c.says, done.stdout + done.stderr), f"{shown}\nthe page says it prints " \
                                                                      f"{c.says!r}; it printed:\n{done.stdout[-2000:]}"
    return done


# ---- what a page's lines expect to find in the folder --------------------------------------------------
# The user's own package, as planner.md's lines use it: an image net with an input factory, an audio front end
# taking (N, L), and a model of two inputs.
MYPKG = {
    "net.py": '''import torch
import torch.nn as nn


def make():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1)).eval()


def example_inputs(mb=1):
    return torch.randn(mb, 3, 32, 32)
''',
    "audio.py": '''import torch.nn as nn


class Audio(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 8, 9, stride=4)

    def forward(self, x):  # (N, L): the channel is added here
        return self.conv(x.unsqueeze(1))


def make():
    return Audio().eval()
''',
    "stereo.py": '''import torch.nn as nn


class Stereo(nn.Module):
    def __init__(self):
        super().__init__()
        self.left, self.right = nn.Conv1d(1, 4, 9, stride=4), nn.Conv1d(1, 4, 9, stride=4)

    def forward(self, left, right):
        return self.left(left.unsqueeze(1)) + self.right(right.unsqueeze(1))


def make():
    return Stereo().eval()
''',
}


def prepare(folder: Path, commands: list[Command]) -> None:
    """Make the files a user has before running these lines: their own model package, their own CSVs."""
    text = "\n".join(c.text for c in commands)
    if "mypkg." in text:
        (folder / "mypkg").mkdir(exist_ok=True)
        (folder / "mypkg" / "__init__.py").write_text("")
        for name, code in MYPKG.items():
            (folder / "mypkg" / name).write_text(code)
    for name in re.findall(r"\b(machine[AB]\.csv)\b", text):
        if not (folder / name).exists():  # two machines' runs of one problem, as `compare`'s line means
            subprocess.run([sys.executable, "-m", "explorer", "run", "mb2ic16ih14oc16oh14kh3ph1", "--budget-ms",
                            "5", "--csv", name], cwd=folder, env=_env(folder), check=True, capture_output=True,
                           timeout=TIMEOUT)


LOCAL = [c for c in ALL if not (is_install(c) or is_cluster_setup(c) or uses_cluster(c))]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    made: dict[str, Path] = {}

    def folder(page: str) -> Path:
        if page not in made:
            made[page] = tmp_path_factory.mktemp(Path(page).stem)
            prepare(made[page], [c for c in ALL if c.page == page])
        return made[page]

    return folder


@pytest.mark.parametrize("c", LOCAL, ids=[c.id for c in LOCAL])
def test_a_page_command_runs_as_the_page_says(c, folders):
    run_command(c, folders(c.page))


# ---- the many-machines lines, on a real scheduler and two real workers --------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    pytest.importorskip("distributed")
    setup = [c for c in ALL if is_cluster_setup(c)]
    assert [c.words[1] for c in setup] == ["scheduler", "worker"], setup
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = shutil.which("dask", path=os.path.dirname(sys.executable)) or shutil.which("dask")
    assert dask, "the fleet extra's `dask` command is missing"
    folder = tmp_path_factory.mktemp("cluster")
    procs = []
    # the README's two lines, with this machine as host A and a free port for 8786
    sched = [dask, *setup[0].words[1:]]
    sched[sched.index("--port") + 1] = str(port)
    procs.append(subprocess.Popen(sched + ["--host", "127.0.0.1", "--dashboard-address", ":0"], cwd=folder,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for k in range(2):  # "on every machine": two workers stand for two machines
        worker = [dask, *[w.replace("tcp://HOST_A:8786", address) for w in setup[1].words[1:]],
                  "--name", f"w{k}", "--no-dashboard"]
        procs.append(subprocess.Popen(worker, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        from distributed import Client

        with Client(address, timeout=120) as client:
            client.wait_for_workers(2, timeout=300)
        yield {"address": address, "host": f"{socket.gethostname()}/w0", "folder": folder}
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()


CLUSTER = [c for c in ALL if uses_cluster(c) and not is_cluster_setup(c)]


@pytest.mark.parametrize("c", CLUSTER, ids=[c.id for c in CLUSTER])
def test_a_cluster_command_runs_as_the_page_says(c, cluster):
    folder = cluster["folder"] / Path(c.page).stem
    folder.mkdir(exist_ok=True)
    prepare(folder, [c])
    if "corpus.txt" in c.text and "--resume" in c.words:
        _a_stopped_corpus_run(c, folder, cluster)
    if "--against" in c.words:
        csv_name = c.words[c.words.index("compare") + 1]
        assert (folder / csv_name).exists(), f"{c.id} reads {csv_name}, which no earlier line of {c.page} made"
    run_command(c, folder, cluster)


def _a_stopped_corpus_run(c: Command, folder: Path, cluster: dict) -> None:
    """`--resume corpus.csv` goes on after a stop: the user's corpus, and the CSV a stopped run left."""
    (folder / "corpus.txt").write_text("".join(f'mb1ic{4 + i}ih6oc8oh6kh3ph1n"c{i}"\n' for i in range(4)))
    target = c.words[c.words.index("--resume") + 1]
    full = folder / "corpus-full.csv"
    subprocess.run([sys.executable, "-m", "explorer", "batch", "corpus.txt", "--cluster", cluster["address"],
                    "--budget-ms", "5", "--csv", full.name], cwd=folder, env=_env(folder), check=True,
                   capture_output=True, timeout=TIMEOUT)
    with open(full, newline="") as f:
        rows = list(csv.reader(f))
    with open(folder / target, "w", newline="") as f:  # the run stopped after half its rows
        csv.writer(f).writerows(rows[: 1 + (len(rows) - 1) // 2])
