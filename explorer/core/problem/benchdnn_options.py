"""Every benchdnn conv option, and the one rule for each: honoured (applied to what is timed) or refused by name.

The catalogue follows oneDNN's tests/benchdnn/doc/driver_conv.md, knobs_attr.md and knobs_common.md and
bench_conv.cpp's parser. `option_refusal` (re-exported by spec.py) is what `run`, `sweep`, `batch`, `--list`,
the window's field and a pasted line all ask; the options page's table (explorer.cli.reference) is printed
from OPTIONS, and a test checks each row's examples against `option_refusal`.

Benchdnn's own meaning is kept where a word is honoured: `--dir=FWD_I`/`FWD_D` have no bias unless
`--bia-dt` gives one (res.hpp: only FWD_B and BWD_WB carry FLAG_BIA); `--mb=0` is the descriptor's own mb.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from explorer.core.problem import post_ops
from explorer.core.problem.int8_config import attr_problem, int8_dtype

FLOAT_DTS = ("f32", "bf16", "f16")
FORWARD_DIRS = ("FWD_B", "FWD_D", "FWD_I")
DIRECTIONS = FORWARD_DIRS + ("BWD_D", "BWD_W", "BWD_WB")  # as spec.DIRECTIONS (spec imports this module)
_CFG_DT = {"f32": "f32", "f16": "f16", "bf16bf16bf16": "bf16"}  # legacy --cfg names with one data type


def uniform_dtype(value: str) -> str | None:
    """f32/bf16/f16 when --dt (`bf16`, `bf16:bf16:bf16`) or --cfg (`bf16bf16bf16`) gives one data type for
    src, weights and dst; None for anything else (int8, f64, mixed such as f32:bf16:bf16)."""
    v = value.lower()
    if v in _CFG_DT:
        return _CFG_DT[v]
    parts = v.split(":")
    if len(parts) in (1, 3) and len(set(parts)) == 1 and parts[0] in FLOAT_DTS:
        return parts[0]
    return None


@dataclass(frozen=True)
class Option:
    """One benchdnn option: its spellings, what this tool does with it, and why."""

    names: tuple[str, ...]  # spellings without `--`; the first is the table's
    honoured: str  # which values are honoured, '' when none is
    why: str  # why the rest is refused (or why the word changes nothing timed)
    ok: Callable[[str], bool]  # value -> honoured?
    honoured_example: str  # a word this tool honours ('' when none)
    refused_example: str  # a word it refuses ('' when none)
    instead: str = "the conv without it"  # what is timed if the word is dropped
    listable: bool = True  # benchdnn takes a comma-separated list (a batch expands it)
    batch_only: bool = False  # carries over between lines: only a batch file has it
    reason: Callable[[str], str] | None = None  # value -> why it is refused, when that depends on the value

    @property
    def status(self) -> str:
        """`honoured` (every value), `batch only`, `some values`, `default only` (restates the default) or `refused`."""
        if not self.honoured_example:
            return "refused"
        if self.batch_only:
            return "batch only"
        if not self.refused_example:
            return "honoured"
        return "default only" if self.honoured.startswith("default only") else "some values"


# src/dst tags honoured (spec.io_tag): plain (abx) or channels-last (axb) activations, as benchdnn spells them.
IO_TAGS = {"any": "", "": "", "abx": "abx", "nchw": "abx", "ncw": "abx", "ncdhw": "abx",
           "axb": "axb", "nhwc": "axb", "nwc": "axb", "ndhwc": "axb"}


def io_tag(stag: str = "any", dtag: str = "any") -> str:
    """The activations' layout a line asks for: '' (each path's own), 'abx' (NCHW) or 'axb' (channels_last).
    Raises ValueError with one sentence when --stag and --dtag ask for two different ones."""
    s, d = IO_TAGS.get(stag, None), IO_TAGS.get(dtag, None)
    if s is None or d is None:
        raise ValueError(f"--stag={stag} --dtag={dtag}: only any, abx (nchw) and axb (nhwc) are honoured")
    if s and d and s != d:
        raise ValueError(f"--stag={stag} with --dtag={dtag}: no path here takes one layout in and gives the other "
                         f"out; give one layout for both")
    return s or d


def _default_only(*defaults: str, case: bool = False) -> Callable[[str], bool]:
    want = defaults if case else tuple(d.lower() for d in defaults)
    return lambda v: (v if case else v.lower()) in want


_TAG_WHY = ("memory formats are what each path uses (dense NCHW, channels_last, the MKLDNN blocked formats: "
            "see `layout`), not set by the line")
_KNOB_WHY = "benchdnn's own timing settings; this tool times with its own (--threads, --budget-ms, --isa)"
_HARNESS_WHY = "steers only benchdnn's own checking or printing, not the problem or how it is timed"

OPTIONS: tuple[Option, ...] = (
    Option(("dir",), "FWD_B, FWD_D, FWD_I, BWD_D, BWD_W, BWD_WB (any case): the row's `direction`; a backward "
           "one times only the gradients (aten.convolution_backward with benchdnn's mask)",
           "benchdnn has no other direction", lambda v: v.upper() in DIRECTIONS, "--dir=BWD_D", "--dir=BWD",
           instead="the forward conv (FWD_B)"),
    Option(("dt", "cfg"), "one data type for src, weights and dst: f32, bf16, f16 (`bf16`, `bf16:bf16:bf16`, "
           "`--cfg=bf16bf16bf16`); int8: u8 or s8 src, s8 weights, u8/s8/s32/f32 dst (`--cfg=u8s8u8`, "
           "`--dt=u8:s8:u8`), timed on the int8 paths",
           "f64, fp8, mixed float types (f32:bf16:bf16) and other int types are not timed: a float path runs one "
           "data type, an int8 one u8/s8 src, s8 weights",
           lambda v: uniform_dtype(v) is not None or int8_dtype(v) is not None,
           "--dt=u8:s8:u8", "--dt=f32:bf16:bf16", instead="the conv in f32 (or give --dt=bf16 or --dt=f16)"),
    Option(("bia-dt", "bia_dt"), "`undef` (no bias) or the conv's own data type",
           "PyTorch's conv takes its bias in the conv's data type; with FWD_B the bias is on and in that type "
           "(benchdnn's is f32)", lambda v: v.lower() == "undef" or v.lower() in FLOAT_DTS,
           "--bia-dt=undef", "--bia-dt=s32"),
    Option(("mb",), "N (0: the descriptor's own mb)", "the minibatch must be a whole number",
           lambda v: v.isdigit(), "--mb=4", "--mb=four"),
    Option(("match",), "REGEX: problems whose benchdnn line does not match are left out, as benchdnn does",
           "only a batch file has several problems to filter", lambda v: True, "--match=.*kh3.*", "",
           listable=False, batch_only=True),
    Option(("reset",), "back to the defaults, as in benchdnn", "option lines carry over only in a batch file",
           lambda v: v == "", "--reset", "", listable=False, batch_only=True),
    Option(("batch",), "FILE: its lines inline (relative to the including file, or a shipped batch)",
           "a batch file is run by the batch command, not inside one line", lambda v: v != "",
           "--batch=shapes_resnet_50", "", listable=False, batch_only=True),
    Option(("stag",), "`any` (each path's own layout); `axb`/`nhwc`: only the paths that take a channels_last "
           "input (channels_last, mkldnn_prepacked) are timed, the rest are `unsupported` rows naming it; "
           "`abx`/`nchw`: only the paths that take plain NCHW", _TAG_WHY + "; blocked tags such as aBx16b are "
           "not an input a PyTorch user hands over", lambda v: v in IO_TAGS, "--stag=axb", "--stag=aBx16b",
           instead="each path in its own layout"),
    Option(("wtag",), "default only: `any`", _TAG_WHY, _default_only("any", case=True), "--wtag=any", "--wtag=abx",
           instead="each path in its own layout"),
    Option(("dtag",), "`any`, `axb`/`nhwc` or `abx`/`nchw`: the output layout, as --stag restricts the paths",
           _TAG_WHY, lambda v: v in IO_TAGS, "--dtag=axb", "--dtag=acdb", instead="each path in its own layout"),
    Option(("strides",), "default only: empty (dense tensors)", "tensor strides are what each path uses",
           lambda v: v == "", "--strides=", "--strides=1x2x3x4::"),
    Option(("alg",), "default only: `direct` (PyTorch's CPU convs never use winograd)",
           "PyTorch never asks oneDNN for winograd or for its automatic choice: the algorithm cannot be forced",
           _default_only("direct"), "--alg=direct", "--alg=wino", instead="PyTorch's direct conv"),
    Option(("attr-post-ops",), "eltwise relu[:alpha], gelu_erf, gelu_tanh, logistic/sigmoid, tanh, swish:alpha/silu, "
           "clip:lo:hi/hardtanh, elu[:alpha], and sum[:scale] (the residual add), chained with `+`: the "
           "`post_ops` column; eager paths run them as PyTorch code after the conv, the routes fuse them",
           "binary post-ops with a second tensor, prelu, the fused depthwise `dw` and other eltwise kinds are "
           "not timed", lambda v: post_ops.refusal(v) == "", "--attr-post-ops=sum+relu",
           "--attr-post-ops=add:f32", reason=post_ops.refusal),
    Option(("attr-scales",), "with an int8 --cfg/--dt: src:common:S, wei:common:S or wei:per_oc, dst:common:S "
           "(the `scales` column; what is left out is calibrated on the data)",
           "PyTorch's int8 convs take common src/dst scales and common or per_oc weight scales",
           lambda v: attr_problem(v, "scales") == "", "--attr-scales=src:common:0.25+wei:per_oc",
           "--attr-scales=src:per_dim_1", instead="the conv without it"),
    Option(("attr-zero-points",), "with an int8 --cfg/--dt: src:common:Z, dst:common:Z (the `zero_points` column)",
           "PyTorch's int8 convs take common src/dst zero points and symmetric weights",
           lambda v: attr_problem(v, "zero points") == "", "--attr-zero-points=src:common:1",
           "--attr-zero-points=wei:common:1", instead="the conv without it"),
    Option(("attr-fpmath",), "default only: `strict`", "no reduced-precision math mode is set on PyTorch's convs",
           _default_only("strict", "strict:true"), "--attr-fpmath=strict", "--attr-fpmath=tf32"),
    Option(("attr-acc-mode",), "default only: `strict`", "no accumulation mode is set on PyTorch's convs",
           _default_only("strict"), "--attr-acc-mode=strict", "--attr-acc-mode=relaxed"),
    Option(("attr-rounding-mode",), "default only: empty", "no rounding mode is set on PyTorch's convs",
           lambda v: v == "", "--attr-rounding-mode=", "--attr-rounding-mode=dst:stochastic"),
    Option(("attr-scratchpad",), "default only: `library` (PyTorch manages the scratchpad itself)",
           "the scratchpad mode is PyTorch's choice", _default_only("library"), "--attr-scratchpad=library",
           "--attr-scratchpad=user"),
    Option(("attr-deterministic",), "default only: `false`", "no deterministic mode is set on PyTorch's convs",
           _default_only("false", "0"), "--attr-deterministic=false", "--attr-deterministic=true"),
    Option(("attr-dropout",), "default only: empty", "dropout is not applied", lambda v: v == "",
           "--attr-dropout=", "--attr-dropout=0.5"),
    Option(("impl",), "default only: empty", "the implementation is PyTorch's choice per path; it cannot be "
           "filtered", lambda v: v == "", "--impl=", "--impl=brg", listable=False),
    Option(("skip-impl",), "default only: empty", "the implementation is PyTorch's choice per path; it cannot be "
           "filtered", lambda v: v == "", "--skip-impl=", "--skip-impl=ref", listable=False),
    Option(("engine",), "`cpu` (`cpu:0`)", "only the CPU is timed", lambda v: v.lower() in ("cpu", "cpu:0"),
           "--engine=cpu", "--engine=gpu", listable=False),
    Option(("allow-enum-tags-only",), "any value", _HARNESS_WHY, lambda v: True, "--allow-enum-tags-only=0", "",
           listable=False),
    Option(("check-ref-impl",), "any value", _HARNESS_WHY, lambda v: True, "--check-ref-impl=true", "",
           listable=False),
    Option(("attr-same-pd-check",), "any value", _HARNESS_WHY, lambda v: True, "--attr-same-pd-check=true", "",
           listable=False),
    Option(("canonical",), "any value", _HARNESS_WHY, lambda v: True, "--canonical=true", "", listable=False),
    Option(("summary",), "any value", _HARNESS_WHY, lambda v: True, "--summary=no-failures", "", listable=False),
    Option(("perf-template",), "any value", _HARNESS_WHY, lambda v: True, "--perf-template=csv", "",
           listable=False),
    Option(("verbose",), "any value", _HARNESS_WHY, lambda v: True, "--verbose=1", "", listable=False),
    Option(("mem-check",), "any value", _HARNESS_WHY, lambda v: True, "--mem-check=false", "", listable=False),
    Option(("ctx-init", "ctx-exe"), "none", "benchdnn's thread contexts; use this tool's --threads",
           lambda v: False, "", "--ctx-exe=4", listable=True),
    Option(("mode",), "none", _KNOB_WHY, lambda v: False, "", "--mode=P", listable=False),
    Option(("mode-modifier",), "none", _KNOB_WHY, lambda v: False, "", "--mode-modifier=P", listable=False),
    Option(("fix-times-per-prb",), "none", _KNOB_WHY, lambda v: False, "", "--fix-times-per-prb=100",
           listable=False),
    Option(("max-ms-per-prb",), "none", _KNOB_WHY, lambda v: False, "", "--max-ms-per-prb=1000", listable=False),
    Option(("repeats-per-prb",), "none", _KNOB_WHY, lambda v: False, "", "--repeats-per-prb=10", listable=False),
    Option(("cold-cache",), "none", _KNOB_WHY, lambda v: False, "", "--cold-cache=all", listable=False),
    Option(("num-streams",), "none", _KNOB_WHY, lambda v: False, "", "--num-streams=2", listable=False),
    Option(("cpu-isa-hints",), "none", "oneDNN's ISA hints are not set; use this tool's --isa (an ISA cap)",
           lambda v: False, "", "--cpu-isa-hints=prefer_ymm", listable=False),
    Option(("execution-mode",), "none", _KNOB_WHY, lambda v: False, "", "--execution-mode=graph", listable=False),
    Option(("memory-kind",), "none", _KNOB_WHY, lambda v: False, "", "--memory-kind=usm", listable=False),
    Option(("stream-kind",), "none", _KNOB_WHY, lambda v: False, "", "--stream-kind=in_order", listable=False),
    Option(("fast-ref",), "none", "benchdnn's reference check is not run here", lambda v: False, "",
           "--fast-ref=true", listable=False),
    Option(("start",), "none", "problems are not skipped by position; use --match or edit the file",
           lambda v: False, "", "--start=10", listable=False),
)

_BY_NAME = {n: o for o in OPTIONS for n in o.names}


def option_of(word: str) -> tuple[Option | None, str, str]:
    """(catalogue entry or None, key, value) of an option word such as `--dir=FWD_D`."""
    key, _, value = word[2:].partition("=")
    key = key.lower()
    return _BY_NAME.get(key), key, value


def _shown(word: str) -> str:
    return word if len(word) <= 40 else word[:37] + "..."


def option_refusal(word: str, in_batch: bool = False) -> str:
    """'' when the option word is honoured, else one sentence naming it, why, and what is timed without it.

    in_batch: the word is one value of a batch file's option (lists already split, --reset/--batch/--match
    meaningful). On a single line a comma list is refused: it would make several problems."""
    opt, key, value = option_of(word)
    shown = _shown(word)
    if opt is None:
        return (f"{shown}: unknown benchdnn option; drop the word to time the line without it (the options page "
                f"lists every benchdnn conv option and what this tool does with it).")
    if opt.batch_only and not in_batch:
        return f"{shown}: {opt.why}; drop the word to time the line without it."
    if not in_batch and opt.listable and "," in value:
        return (f"{shown}: a list of values makes several problems; give one value on a line, or use a batch file "
                f"or --vary.")
    if opt.ok(value):
        return ""
    why = opt.reason(value) if opt.reason is not None else opt.why
    return f"{shown}: {why}; drop the word to time {opt.instead}."


def split_values(word: str) -> list[str]:
    """The words a batch option stands for: `--dt=f32,bf16` is `--dt=f32` and `--dt=bf16` (benchdnn's
    vector options); an empty value is the default, one word. Single-value options stay whole."""
    opt, key, value = option_of(word)
    if opt is None or not opt.listable or "," not in value:
        return [word]
    head = word[: len(word) - len(value)]
    # An empty item of an attribute list is benchdnn's "no attribute" (`--attr-post-ops=,relu`: none, then relu).
    items = value.split(",") if opt.names[0].startswith("attr-") else [v for v in value.split(",") if v != ""]
    return [head + v for v in items] or [head]


def option_key(word: str) -> str:
    """The setting a word changes (`cfg` and `dt` are one, so are `bia_dt` and `bia-dt`)."""
    opt, key, _ = option_of(word)
    return opt.names[0] if opt is not None else key

