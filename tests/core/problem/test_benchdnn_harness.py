"""Issue 32: every line of oneDNN's own conv harness files (tests/data/benchdnn-harness) is honoured or refused
by name, never silently changed.

The reference below walks each file as benchdnn's parser does (bench_conv.cpp: options last-wins until
--reset, one set of settings across --batch= files, comma lists expanded per descriptor, --match on the
problem's line), independently of the batch reader, and lists the problems benchdnn would run with their
option words. Each of the batch reader's points must then be that problem: honoured only when every word
is one of the words written out below (and then dtype, bias, mb and shape are exactly the line's), else
refused with a sentence that starts with the line and a word of that problem.
"""

import itertools
import re
from pathlib import Path

import pytest

from explorer.core.problem.batch import load_batch, read_batch_text
from explorer.core.problem.spec import parse_problem, strip_comment

HARNESS = Path(__file__).resolve().parents[2] / "data" / "benchdnn-harness"
FILES = sorted(p.name for p in HARNESS.iterdir() if p.name.startswith(("test_conv_", "harness_conv_")))
LISTS = {"dir", "dt", "cfg", "bia-dt", "stag", "wtag", "dtag", "strides", "alg", "mb", "attr-post-ops",
         "attr-scales", "attr-zero-points", "attr-fpmath", "attr-acc-mode", "attr-scratchpad",
         "attr-rounding-mode", "attr-deterministic", "attr-dropout", "ctx-init", "ctx-exe"}
# The only words a problem may carry and still be timed, written out here and not taken from the tool.
# Post-ops: the eltwise kinds PyTorch runs after a conv (and fuses) and sum with its scale, chained with `+`.
_N = r"-?[\d.]+(?:e-?\d+)?"
_POST = (rf"(?:relu(?::{_N})?|gelu_erf|gelu_tanh|logistic|tanh|swish:{_N}|clip:{_N}:{_N}|elu(?::{_N})?"
         rf"|sum(?::{_N})?(?::0)?)(?::0)*")
HONOURED = re.compile(
    r"--(dir=(?i:fwd_[bdi]|bwd_d|bwd_w|bwd_wb)|(dt|cfg)=(f32|bf16|f16|bf16:bf16:bf16|f16:f16:f16|f32:f32:f32|bf16bf16bf16)"
    r"|(dt|cfg)=(?i:[us]8:?s8:?(u8|s8|s32|f32))"
    r"|(bia-dt|bia_dt)=(undef|f32|bf16|f16)|mb=\d+|wtag=any|[sd]tag=(any|abx|axb|nchw|nhwc|ncw|nwc|ncdhw|ndhwc|)|alg=(?i:direct)|strides="
    rf"|attr-post-ops=(?i:{_POST}(?:\+{_POST})*)?"
    r"|attr-scales=|attr-zero-points=|attr-fpmath=strict|attr-acc-mode=strict|attr-scratchpad=library"
    r"|skip-impl=|impl=|allow-enum-tags-only=\w*|check-ref-impl=\w*)$")
_WORD = re.compile(r'(?:[^\s"]+|"[^"]*")+')
_LAYOUT = {t: "plain" for t in ("abx", "nchw", "ncw", "ncdhw")} | {t: "channels_last" for t in ("axb", "nhwc", "nwc", "ndhwc")}


INT8 = re.compile(r"(?i:[us]8:?s8:?(u8|s8|s32|f32))$")
# issue 32: PyTorch's int8 convs take common src/dst scales and zero points, common or per_oc weight scales
QUANT = re.compile(r"--(attr-scales=((src0?|dst):common:[\d.]+|wei:(common:[\d.]+|per_oc))"
                   r"(\+((src0?|dst):common:[\d.]+|wei:(common:[\d.]+|per_oc)))*"
                   r"|attr-zero-points=(src0?|dst):common:-?\d+(\+(src0?|dst):common:-?\d+)*)$")


def honoured(word: str, words: dict) -> bool:
    """What this tool honours, written apart from its code: scales and zero points only on an int8 line; no
    post-ops on a backward line; an int8 line only forward, without post-ops or layout tags."""
    dt = (words.get("dt") or words.get("cfg") or "--dt=f32").partition("=")[2]
    int8 = bool(INT8.match(dt))
    backward = words.get("dir", "--dir=FWD_B").partition("=")[2].upper().startswith("BWD")
    value = word.partition("=")[2]
    if word.startswith(("--attr-scales=", "--attr-zero-points=")) and value:
        return bool(int8 and QUANT.match(word))
    if word.startswith("--attr-post-ops=") and value and (backward or int8):
        return False
    if word.startswith(("--stag=", "--dtag=")) and value.lower() not in ("", "any") and int8:
        return False
    if word.startswith("--dir=") and backward and int8:
        return False
    if word.startswith(("--dt=", "--cfg=")) and int8 and (backward or any(
            w.partition("=")[2] and (w.startswith("--attr-post-ops=") or (w.startswith(("--stag=", "--dtag="))
                                     and w.partition("=")[2].lower() != "any")) for w in words.values())):
        return False
    return bool(HONOURED.match(word))


def _text_of(name: str, folder: Path) -> tuple[str, Path]:
    local = folder / name
    if local.is_file():
        return local.read_text(encoding="utf-8"), folder
    return read_batch_text(name.removeprefix("shapes_"))[1], folder  # identical text ships in resources/batches


def _tokens(text: str):
    """(line, token) as benchdnn's common.cpp `batch` reads a file: whitespace-separated, `#` comments, and a
    token ending in a backslash (or a lone one) glued to the next token."""
    out: list[list] = []
    glue = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        body = re.sub(r'(?<=\S)\s+(n"[^"]*")', r"\1", strip_comment(raw).strip())
        for tok in _WORD.findall(body):
            if glue:
                out[-1][1] += tok
            else:
                out.append([lineno, tok])
            glue = out[-1][1].endswith("\\")
            if glue:
                out[-1][1] = out[-1][1][:-1]
                if not out[-1][1]:
                    out.pop()
    return out


def reference_problems(path: Path):
    """(line, descriptor, {option: word}) of every problem benchdnn runs for the file, in its order."""
    settings: dict[str, list[str]] = {}
    match: list = [None]

    def walk(text: str, folder: Path, top: bool):
        for lineno, word in _tokens(text):
            if not word.startswith("--"):
                for combo in itertools.product(*settings.values()):
                    chosen = dict(zip(settings, combo))
                    if match[0] is not None:
                        spec = parse_problem(word, sizes=False)
                        mb = int(chosen.get("mb", "--mb=0").partition("=")[2] or 0)
                        spec = spec.replace(mb=mb) if mb else spec
                        line = " ".join([w for k, w in chosen.items() if k != "mb"] + [spec.benchdnn_descriptor()])
                        if not re.search(match[0], line):
                            continue
                    yield lineno if top else None, word, chosen
                continue
            key, _, value = word[2:].partition("=")
            key = {"cfg": "dt", "bia_dt": "bia-dt"}.get(key.lower(), key.lower())
            if key == "reset":
                settings.clear()
                match[0] = None
            elif key == "match":
                match[0] = value or None
            elif key == "batch":
                yield from walk(*_text_of(value, folder), top=False)
            elif key in LISTS and "," in value:
                head = word[: len(word) - len(value)]
                # benchdnn's vector options; an empty attribute item is "no attribute" (`--attr-post-ops=,relu`)
                items = value.split(",") if key.startswith("attr-") else [v for v in value.split(",") if v]
                settings[key] = [head + v for v in items] or [head]
            else:
                settings[key] = [word]

    yield from walk(path.read_text(encoding="utf-8"), path.parent, top=True)


def _check(name: str) -> dict:
    path = HARNESS / name
    batch = load_batch(str(path), sizes=False)
    count = {"honoured": 0, "refused": 0}
    n = 0
    for p, (line, desc, words) in itertools.zip_longest(batch.points, reference_problems(path), fillvalue=(0, 0, 0)):
        assert p and desc, f"{name}: {len(batch.points)} points, benchdnn runs another number ({n} agree)"
        n += 1
        assert p.text == desc and (line is None or p.line == line), (name, p.line, p.text, line, desc)
        assert p.index not in batch.bad, (name, p.error)  # every line of oneDNN's files parses
        if p.refused:
            named = p.error.split(": ", 2)[1].split(" (set ")[0].removesuffix("...")
            assert p.spec is None and p.error.startswith(f"line {p.line}: --"), (name, p.error)
            pair = re.fullmatch(r"--stag=(\w*) with --dtag=(\w*)", named)  # two layouts asked for: no path takes both
            if pair:
                assert {_LAYOUT.get(pair[1]), _LAYOUT.get(pair[2])} == {"plain", "channels_last"}, (name, p.error)
                assert (words.get("stag"), words.get("dtag")) == (f"--stag={pair[1]}", f"--dtag={pair[2]}"), p.error
            else:
                assert any(w.startswith(named) and not honoured(w, words) for w in words.values()), (name, p.error, words)
            count["refused"] += 1
            continue
        bad = [w for w in words.values() if not honoured(w, words)]
        assert not bad, f"{name} line {p.line}: {desc} was timed although it carries {bad}"
        value = {k: w.partition("=")[2] for k, w in words.items()}
        dt = value.get("dt", "f32").lower()
        dt = {"bf16bf16bf16": "bf16"}.get(dt, dt.replace(":", "") if INT8.match(dt) else dt.split(":")[0])
        bias = value.get("dir", "FWD_B").upper() in ("FWD_B", "BWD_WB") or value.get("bia-dt", "undef") != "undef"
        shape = parse_problem(desc, sizes=False)
        mb = int(value.get("mb") or 0) or shape.mb
        assert (p.spec.dtype, p.spec.bias, p.spec.mb) == (dt, bias, mb), (name, p.line, desc, words)
        assert p.spec.direction == value.get("dir", "FWD_B").upper().replace("FWD_D", "FWD_B" if bias else "FWD_D"), \
            (name, p.line, desc, words)  # a backward line runs as that backward; FWD_D with a --bia-dt is FWD_B's conv
        assert bool(p.spec.post_ops) == bool(value.get("attr-post-ops")), (name, p.line, desc, words)
        tags = {value.get("stag", "any"), value.get("dtag", "any")} - {"any"}
        assert bool(p.spec.io_tag) == bool(tags), (name, p.line, desc, words)
        quant = (value.get("attr-scales", ""), value.get("attr-zero-points", ""))
        assert (p.spec.scales, p.spec.zero_points) == quant, (name, p.line, desc, words)  # int8: carried, not lost
        assert p.spec.replace(dtype="f32", bias=True, mb=shape.mb, direction="FWD_B", post_ops="", io_tag="",
                              scales="", zero_points="") == shape, (name, p.line, desc)
        count["honoured"] += 1
    return count


def test_every_harness_file_ships_with_its_licence():
    assert len(FILES) == 55  # oneDNN's 31 test_conv_* and 24 harness_conv_* files at the README's commit
    assert (HARNESS / "LICENSE-oneDNN").read_text().lstrip().startswith("Apache License")
    assert "515bfba68c0254e23c876d4c1a7cc26c2d4b690b" in (HARNESS / "README.md").read_text()


@pytest.mark.slow
def test_every_line_of_the_harness_files_is_honoured_or_refused_by_name():
    counts, failures = {}, []
    for name in FILES:
        try:
            counts[name] = _check(name)
        except AssertionError as e:
            failures.append(f"{name}: {str(e)[:300]}")
    summary = "\n".join(f"{n:38s} honoured {c['honoured']:6d}  refused {c['refused']:6d}" for n, c in counts.items())
    total = {k: sum(c[k] for c in counts.values()) for k in ("honoured", "refused")}
    assert not failures, "\n".join(failures[:10]) + f"\n\nper file:\n{summary}\ntotal {total}"
    assert total["honoured"] > 0 and total["refused"] > 0, summary
