"""The convolution spec, its benchdnn descriptor (parse and print), validation and op counts.

The problem model is benchdnn's own (tests/benchdnn/conv/conv_aux.cpp `str2desc`, common.cpp
`sanitize_desc`, conv.hpp `desc_t::init_pad_r`, `prb_t::count_ops` in oneDNN):

- 1-D (only w-values), 2-D (h and w) or 3-D (d, h and w) convolutions; ndims 3, 4 or 5 as oneDNN counts.
- Defaults: g=1, mb=2, stride 1, dilation 0 (0-based: PyTorch dilation d is benchdnn d-1).
- A dim whose values are all absent copies the next larger dim's values: w copies h (2-D), h and w copy d
  (3-D, only when neither h nor w is written). Once any value of a dim is written, its i and k are required.
- Output absent: left pad defaults to 0 and the output is computed. Output given and pad absent: the pad is
  ((o-1)*s - i + span)/2 (C division). Right pad: always what the output size implies,
  (o-1)*s - i + span - p_left; it differs from the left pad for e.g. TensorFlow-style "same" padding.
- `ops` is benchdnn's count, shortcut included (every tap counts when (upper-lower)/lower < 1e-6);
  `exact_ops` counts only taps landing inside the input.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

from explorer.core.errors import SpecError
from explorer.core.problem import benchdnn_options, post_ops
from explorer.core.problem.int8_config import INT8_DTYPES, int8_dtype

DTYPES = ("f32", "bf16", "f16")
# benchdnn's --dir values (dnnl_common.hpp dir_t): forward with bias, forward without, forward inference, and the
# backward by data, by weights, by weights and bias. FWD_B and FWD_D are the same forward but for the bias.
DIRECTIONS = benchdnn_options.DIRECTIONS
BACKWARD_DIRECTIONS = DIRECTIONS[3:]
SPATIAL_KEYS = ("ih", "iw", "oh", "ow", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw")
KNOWN_KEYS = ("g", "mb", "ic", "oc") + SPATIAL_KEYS + ("id", "od", "kd", "sd", "pd", "dd")
# Fields a user may set or sweep, in descriptor order (2-D; DEPTH_FIELDS add the 3-D ones).
SPEC_FIELDS = ("mb", "g", "ic", "ih", "iw", "oc", "oh", "ow", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw")
DEPTH_FIELDS = ("id", "kd", "sd", "pd", "dd")
# Larger numbers than this in a single field are refused before anything is allocated.
MAX_FIELD_VALUE = 1 << 24
MAX_TENSOR_ELEMENTS = 1 << 36

_TOKEN = re.compile(r'_*(?:(n)"([^"]*)"|([a-z]+)(-?\d+))_*')
_BARE_NAME = re.compile(r'_*n([^"\d][^"]*|)$')  # benchdnn: `n` starts the name, the rest of the text (maybe none)

FIELD_HELP = {
    "mb": "minibatch size (images per call)",
    "g": "groups (must divide ic and oc)",
    "ic": "input channels",
    "id": "input depth",
    "ih": "input height",
    "iw": "input width",
    "oc": "output channels",
    "od": "output depth",
    "oh": "output height",
    "ow": "output width",
    "kd": "kernel depth",
    "kh": "kernel height",
    "kw": "kernel width",
    "sd": "stride along depth",
    "sh": "stride along height",
    "sw": "stride along width",
    "pd": "left (front) padding along depth",
    "ph": "left (top) padding along height",
    "pw": "left padding along width",
    "dd": "dilation along depth, 0-based as in benchdnn (PyTorch dilation = dd + 1)",
    "dh": "dilation along height, 0-based as in benchdnn (PyTorch dilation = dh + 1)",
    "dw": "dilation along width, 0-based as in benchdnn (PyTorch dilation = dw + 1)",
}
_DIM_WORD = {"d": "depth", "h": "height", "w": "width"}
DIMS_OF = {3: ("w",), 4: ("h", "w"), 5: ("d", "h", "w")}


def out_size(i: int, k: int, s: int, p: int, d: int, p_r: int | None = None) -> int:
    """Output extent of one spatial dim (floor formula; p_r defaults to p, symmetric; 0-based d)."""
    return (i + p + (p if p_r is None else p_r) - ((k - 1) * (d + 1) + 1)) // s + 1


def _cdiv(a: int, b: int) -> int:
    """C's integer division (truncates toward zero), as benchdnn computes."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _taps_inside(i: int, o: int, k: int, s: int, p: int, d: int) -> int:
    """Kernel taps, summed over all outputs of one dim, that land inside the input (not padding)."""
    total = 0
    for ki in range(k):
        off = ki * (d + 1) - p  # input index that output oi reads for this tap is off + oi*s
        lo = max(0, -(off // s))
        hi = min(o - 1, (i - 1 - off) // s)
        if hi >= lo:
            total += hi - lo + 1
    return total


@dataclass(frozen=True)
class ConvSpec:
    """One 1-D, 2-D or 3-D convolution problem. Dilation is 0-based as in benchdnn.

    ph/pw/pd are the left (top, front) pads. ph_r/pw_r/pd_r are the right pads, None when equal to the
    left one (PyTorch's symmetric padding). A 1-D spec keeps ih=kh=oh=1 and ph=0; a 2-D spec keeps
    id=kd=1 and pd=0, as benchdnn does.
    """

    mb: int = 2
    g: int = 1
    ic: int = 16
    ih: int = 14
    iw: int = 14
    oc: int = 16
    kh: int = 3
    kw: int = 3
    sh: int = 1
    sw: int = 1
    ph: int = 1
    pw: int = 1
    dh: int = 0
    dw: int = 0
    bias: bool = True
    dtype: str = "f32"
    name: str = ""
    # 3-D values and right pads (after the original fields so positional use is unchanged).
    id: int = 1
    kd: int = 1
    sd: int = 1
    pd: int = 0
    dd: int = 0
    ndims: int = 4
    pd_r: int | None = None
    ph_r: int | None = None
    pw_r: int | None = None
    direction: str = "FWD_B"  # benchdnn's --dir (DIRECTIONS); a backward one times the gradients, not the conv
    # benchdnn's --attr-post-ops, canonical (explorer.core.problem.post_ops): '' is the plain conv.
    post_ops: str = ""
    # --stag/--dtag as honoured: '' (each path's own layout), 'abx' (NCHW) or 'axb' (channels_last) activations.
    io_tag: str = ""
    # int8 (dtype u8s8u8 etc.): the line's --attr-scales / --attr-zero-points values, '' when not given
    scales: str = ""
    zero_points: str = ""

    def __post_init__(self):
        # FWD_B and FWD_D differ only by the bias (benchdnn's FLAG_BIA): the bias decides which one this is, so a
        # spec whose bias is switched off (the window's box, --no-bias) never says FWD_B.
        if self.direction in ("FWD_B", "FWD_D") and isinstance(self.bias, bool):
            object.__setattr__(self, "direction", "FWD_B" if self.bias else "FWD_D")

    @property
    def backward(self) -> bool:
        """True for BWD_D, BWD_W and BWD_WB: the timed call is the conv's backward."""
        return self.direction in BACKWARD_DIRECTIONS

    # ---- derived values -------------------------------------------------------------------
    @property
    def dims(self) -> tuple[str, ...]:
        """The spatial dims this problem has, outermost first: ('w',), ('h', 'w') or ('d', 'h', 'w')."""
        return DIMS_OF.get(self.ndims, ("h", "w"))

    def dim(self, x: str) -> tuple[int, int, int, int, int, int]:
        """(i, k, s, p_left, p_right_declared, d) of spatial dim x (d, h or w)."""
        p = getattr(self, f"p{x}")
        pr = getattr(self, f"p{x}_r")
        return (getattr(self, f"i{x}"), getattr(self, f"k{x}"), getattr(self, f"s{x}"), p,
                p if pr is None else pr, getattr(self, f"d{x}"))

    def out(self, x: str) -> int:
        i, k, s, p, pr, d = self.dim(x)
        return out_size(i, k, s, p, d, pr)

    def pad_r(self, x: str) -> int:
        """benchdnn's right pad of dim x: what the output size implies, (o-1)*s - i + span - p_left."""
        i, k, s, p, _, d = self.dim(x)
        return (self.out(x) - 1) * s - i + (k - 1) * (d + 1) + 1 - p

    @property
    def od(self) -> int:
        return self.out("d")

    @property
    def oh(self) -> int:
        return self.out("h")

    @property
    def ow(self) -> int:
        return self.out("w")

    @property
    def asymmetric(self) -> bool:
        """True when PyTorch's conv padding alone cannot express the pads (a F.pad is needed)."""
        return any(self.torch_padding()[1])

    def torch_padding(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(conv padding per dim, F.pad argument) that give exactly this problem in PyTorch.

        The F.pad argument is in F.pad's order (last dim first: w_left, w_right, h_left, ...), all zeros
        when the conv's own symmetric padding is enough. Negative values crop (input rows never read).
        """
        conv_pad, extra = [], []
        for x in self.dims:
            i, k, s, p, pr, d = self.dim(x)
            o = self.out(x)
            if p >= 0 and out_size(i, k, s, p, d) == o:
                conv_pad.append(p)
                extra.append((0, 0))
                continue
            q = max(0, min(p, self.pad_r(x)))
            conv_pad.append(q)
            extra.append((p - q, self.pad_r(x) - q))
        flat = tuple(v for pair in reversed(extra) for v in pair)
        return tuple(conv_pad), flat

    @property
    def torch_dilation(self) -> tuple[int, ...]:
        return tuple(getattr(self, f"d{x}") + 1 for x in self.dims)

    @property
    def torch_stride(self) -> tuple[int, ...]:
        return tuple(getattr(self, f"s{x}") for x in self.dims)

    @property
    def kernel_size(self) -> tuple[int, ...]:
        return tuple(getattr(self, f"k{x}") for x in self.dims)

    @property
    def input_shape(self) -> tuple[int, ...]:
        return (self.mb, self.ic) + tuple(getattr(self, f"i{x}") for x in self.dims)

    @property
    def weight_shape(self) -> tuple[int, ...]:
        return (self.oc, self.ic // self.g) + self.kernel_size

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.mb, self.oc) + tuple(self.out(x) for x in self.dims)

    @property
    def itemsize(self) -> int:
        return 4 if self.dtype == "f32" else 1 if self.is_int8 else 2

    @property
    def is_int8(self) -> bool:
        return self.dtype in INT8_DTYPES

    def _bd(self):
        """benchdnn's prb values (o, i, k, s, p, d) per dim d, h, w; absent dims at benchdnn's defaults."""
        vals = {}
        for x in ("d", "h", "w"):
            if x in self.dims:
                i, k, s, p, _, d = self.dim(x)
                vals[x] = (self.out(x), i, k, s, p, d)
            else:
                vals[x] = (1, 1, 1, 1, 0, 0)
        return vals

    @property
    def exact_ops(self) -> int:
        """2 * mb * oc * ic/g * (kernel taps landing inside the input): the work really done."""
        sp = 1
        for (o, i, k, s, p, d) in self._bd().values():
            sp *= _taps_inside(i, o, k, s, p, d)
        return 2 * self.mb * self.oc * self.ic // self.g * sp

    @property
    def ops(self) -> int:
        """benchdnn's op count as it prints it (prb_t::count_ops): exact_ops, except that every tap,
        padding included, counts when (sp_upper - sp_lower) / sp_lower < 1e-6 (its estimate shortcut).
        The same for every direction: benchdnn's count_ops does not look at --dir (BWD_D and BWD_W do the
        forward's multiply-adds again, once per output tap) and counts no bias, not even BWD_WB's."""
        v = self._bd()
        upper, lower = 1, 1
        for x in ("w", "h", "d"):
            o, i, k, s, p, d = v[x]
            upper *= o
            lower *= o - (k - 1) * (d + 1)
        err = (upper - lower) / lower if lower else (math.inf if upper > lower else math.nan)
        if err < 1e-6:
            return 2 * self.mb * self.oc * self.ic // self.g * upper * math.prod(v[x][2] for x in "dhw")
        return self.exact_ops

    def ops_note(self) -> str:
        """Why ops and exact_ops differ ('' when they agree)."""
        if self.ops == self.exact_ops:
            return ""
        return ("benchdnn's count takes its shortcut here ((upper - lower) / lower < 1e-6 in prb_t::count_ops) and "
                "counts every kernel tap, padding included; exact_ops counts only taps landing inside the input.")

    def normalized(self) -> ConvSpec:
        """The same problem in canonical form (so equal problems compare equal): each right pad None where
        PyTorch's symmetric padding gives the same output, else benchdnn's right pad (a declared pad
        beyond what the last output reads is dropped)."""
        changes = {}
        for x in ("d", "h", "w"):
            pr = getattr(self, f"p{x}_r")
            if pr is not None:
                i, k, s, p, _, d = self.dim(x)
                want = None if out_size(i, k, s, p, d) == self.out(x) else self.pad_r(x)
                if want != pr:
                    changes[f"p{x}_r"] = want
        return dataclasses.replace(self, **changes) if changes else self

    def get(self, field: str):
        return getattr(self, field)

    def replace(self, **changes) -> ConvSpec:
        return dataclasses.replace(self, **changes)

    # ---- descriptor -------------------------------------------------------------------------
    def _square(self) -> bool:
        """benchdnn's print_dhw test: all of (o, i, k, s, p, d) equal across the printed dims."""
        vals = [(self.out(x),) + tuple(v for j, v in enumerate(self.dim(x)) if j != 4) for x in self.dims]
        return all(v == vals[0] for v in vals)

    def descriptor(self, long: bool = False, with_name: bool = True) -> str:
        """benchdnn form. Short: defaults left out and, as benchdnn prints, only the first spatial dim when
        all dims are equal. Long: every key. Right pads are implied by the output sizes (benchdnn's rule),
        so the descriptor round-trips through parse_descriptor."""
        name = f'n"{self.name}"' if (with_name and self.name) else ""
        dims = self.dims
        if long:
            body = f"mb{self.mb}_g{self.g}ic{self.ic}oc{self.oc}"
            for x in dims:
                i, k, s, p, _, d = self.dim(x)
                body += f"_i{x}{i}o{x}{self.out(x)}k{x}{k}s{x}{s}d{x}{d}p{x}{p}"
            return body + (f"_{name}" if name else "")
        shown = dims if not self._square() else dims[:1]

        def group(letter: str) -> str:
            return "".join(f"{letter}{x}{self.out(x) if letter == 'o' else getattr(self, letter + x)}" for x in shown)

        parts = []
        if self.g != 1:
            parts.append(f"g{self.g}")
        parts.append(f"mb{self.mb}ic{self.ic}{group('i')}oc{self.oc}{group('o')}{group('k')}")
        if any(getattr(self, f"s{x}") != 1 for x in dims):
            parts.append(group("s"))
        if any(getattr(self, f"d{x}") != 0 for x in dims):
            parts.append(group("d"))
        parts.append(group("p"))
        return "".join(parts) + name

    def benchdnn_descriptor(self) -> str:
        """Exactly as benchdnn prints the problem (its operator<<): g only when given, mb only when not 2."""
        return re.sub(r"^(g\d+)?mb2(?=ic)", lambda m: m.group(1) or "", self.descriptor())

    @property
    def desc(self) -> str:
        """Canonical short descriptor without the name (the CSV's `desc` column)."""
        return self.descriptor(with_name=False)

    def __str__(self) -> str:
        return self.descriptor()

    # ---- validation -------------------------------------------------------------------------
    def validate(self, sizes: bool = True) -> ConvSpec:
        """Raise SpecError with one sentence naming the field when the spec cannot run.
        sizes=False leaves out the allocation limits (for listing problems without running them)."""
        if self.ndims not in DIMS_OF:
            raise SpecError(f"ndims must be 3, 4 or 5 (1-D, 2-D or 3-D), got {self.ndims!r}.", "ndims")
        fields = ["mb", "g", "ic", "oc"] + [f"{c}{x}" for x in self.dims for c in "iksd"]
        for f in fields + [f"p{x}" for x in self.dims]:
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool):
                raise SpecError(f"{f} must be a whole number, got {v!r}.", f)
            low = 0 if f[0] == "p" or f in ("dd", "dh", "dw") else 1
            if v < low:
                what = "at least 0" if low == 0 else "a positive whole number"
                raise SpecError(f"{f} ({FIELD_HELP[f]}) must be {what}, got {v}.", f)
            if sizes and v > MAX_FIELD_VALUE:
                raise SpecError(f"{f}={v} is too large to allocate; the limit is {MAX_FIELD_VALUE}.", f)
        for x in self.dims:
            pr = getattr(self, f"p{x}_r")
            if pr is not None and (not isinstance(pr, int) or isinstance(pr, bool) or (sizes and abs(pr) > MAX_FIELD_VALUE)):
                raise SpecError(f"the right pad of the {_DIM_WORD[x]} must be a whole number, got {pr!r}.", f"p{x}")
        if self.dtype not in DTYPES and self.dtype not in INT8_DTYPES:
            raise SpecError(f"dtype must be one of {', '.join(DTYPES)} or an int8 config such as u8s8u8, got "
                            f"{self.dtype!r}.", "dtype")
        if (self.scales or self.zero_points) and not self.is_int8:
            raise SpecError(f"scales and zero points apply to int8 configs (--cfg=u8s8u8), not to {self.dtype}.",
                            "dtype")
        if self.direction not in DIRECTIONS:
            raise SpecError(f"direction must be one of {', '.join(DIRECTIONS)}, got {self.direction!r}.", "direction")
        if self.direction == "BWD_WB" and not self.bias:
            raise SpecError("BWD_WB times the weights' and the bias' gradients, but this problem has no bias; use "
                            "BWD_W for the weights alone.", "direction")
        clash = combination_refusal(self.direction, self.dtype, self.post_ops, self.io_tag)
        if clash:
            raise SpecError(clash, "direction" if self.direction in BACKWARD_DIRECTIONS else "dtype")
        if self.io_tag not in ("", "abx", "axb"):
            raise SpecError(f"io_tag must be '', 'abx' or 'axb', got {str(self.io_tag)[:20]!r}.", "io_tag")
        if not isinstance(self.post_ops, str) or post_ops.refusal(self.post_ops):
            why = post_ops.refusal(self.post_ops) if isinstance(self.post_ops, str) else "not text"
            raise SpecError(f"post_ops {str(self.post_ops)[:40]!r}: {why}.", "post_ops")
        if self.ic % self.g:
            raise SpecError(f"g={self.g} does not divide ic={self.ic}: groups must divide the input channels.", "g")
        if self.oc % self.g:
            raise SpecError(f"g={self.g} does not divide oc={self.oc}: groups must divide the output channels.", "g")
        for x in self.dims:
            i, k, s, p, pr, d = self.dim(x)
            span = (k - 1) * (d + 1) + 1
            if span > i + p + pr:
                pads = f"2*p{x}={p}" if pr == p else f"p{x}={p} + right pad {pr}"
                raise SpecError(
                    f"k{x}={k} with dilation d{x}={d} spans {span} pixels, more than the padded input "
                    f"{i + p + pr} (i{x}={i} + {pads}).",
                    f"k{x}",
                )
            if self.pad_r(x) + s <= 0:
                raise SpecError(
                    f"the right pad {self.pad_r(x)} of the {_DIM_WORD[x]} and the stride s{x}={s} must sum to more "
                    f"than 0 (oneDNN's rule): the output o{x}={self.out(x)} is too small for i{x}={i}.", f"o{x}")
        for shape_name, shape in (("input", self.input_shape), ("weight", self.weight_shape), ("output", self.output_shape)):
            if sizes and math.prod(shape) > MAX_TENSOR_ELEMENTS:
                raise SpecError(
                    f"the {shape_name} tensor {'x'.join(map(str, shape))} is too large to allocate.", "mb"
                )
        return self


def _parse_int(key: str, raw: str) -> int:
    value = int(raw)
    if value < 0:
        raise SpecError(f"{key} must not be negative, got {value}.", key)
    return value


def strip_comment(text: str) -> str:
    """Drop a trailing `# comment`, but not a `#` inside a quoted n"name"."""
    if "#" not in text:
        return text
    if '"' not in text:
        return text.split("#", 1)[0]
    quoted = False
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif ch == "#" and not quoted:
            return text[:i]
    return text


_WORD = re.compile(r'(?:[^\s"]|"[^"]*")+')


def _extract_problem(text: str) -> str:
    """Find the descriptor inside a pasted line: a batch-file line, a benchdnn command or a verbose log line."""
    text = strip_comment(text).strip()
    if re.search(r"(?:onednn|dnnl|mkldnn)_verbose,", text):  # the problem is one comma-separated field
        for field in text.split(","):
            field = field.strip()
            if re.search(r"ic\d", field) and re.search(r"[ik]h\d|iw\d", field):
                return field
        raise SpecError("no convolution descriptor (like mb2ic16ih14oc16kh3) found in the pasted line.", "desc")
    words = [w for w in _WORD.findall(text) if not w.startswith("--")]
    if len(words) > 1:
        raise SpecError(f"expected one descriptor, found {len(words)} words: {' '.join(words)[:60]!r}.", "desc")
    return words[0] if words else ""


def option_refusal(word: str, in_batch: bool = False) -> str:
    """The one rule for a benchdnn option word (`--dir=FWD_D`): '' when it is honoured, else one sentence
    naming the word, why, and what is timed without it. The catalogue is benchdnn_options.OPTIONS."""
    return benchdnn_options.option_refusal(word, in_batch)


def check_options(text: str) -> None:
    """Raise SpecError naming the first benchdnn option on the line that is not honoured (option_refusal)."""
    for word in _WORD.findall(strip_comment(text)):
        if word.startswith("--"):
            why = option_refusal(word)
            if why:
                raise SpecError(why, "desc")


def _options(text: str) -> dict[str, str]:
    """benchdnn options on the same line (--dt=bf16, --cfg=bf16bf16bf16, --dir=FWD_D, --mb=1)."""
    opts = {}
    for word in strip_comment(text).split():
        if word.startswith("--") and "=" in word:
            k, v = word[2:].split("=", 1)
            opts[k] = v
    return opts



def parse_problem(problem: str, sizes: bool = True) -> ConvSpec:
    """benchdnn's str2desc + sanitize_desc + init_pad_r on the problem text alone (no options), as a
    ConvSpec (dtype f32, bias on). Raises SpecError with one sentence naming the field."""
    values: dict[str, int] = {}
    name = ""
    pos = 0
    while pos < len(problem):
        bare = _BARE_NAME.match(problem, pos) if pos else None
        if bare:
            name = bare.group(1)
            break
        m = _TOKEN.match(problem, pos)
        if not m or m.end() == pos:
            bad = problem[pos : pos + 12]
            raise SpecError(
                f"cannot read the descriptor at {bad!r}: expected a key and a number such as ic16 or kh3.", "desc"
            )
        pos = m.end()
        if m.group(1):
            name = m.group(2)
            continue
        key, raw = m.group(3), m.group(4)
        if key not in KNOWN_KEYS:
            raise SpecError(
                f"unknown key {key!r} in the descriptor; known keys are {', '.join(KNOWN_KEYS)} and n\"name\".", key
            )
        if key in values:
            raise SpecError(f"key {key!r} appears twice in the descriptor.", key)
        if len(raw.lstrip("-")) > (18 if not sizes else 12):
            raise SpecError(f"{key}={raw} is too large to allocate; the limit is {MAX_FIELD_VALUE}.", key)
        values[key] = _parse_int(key, raw)

    g = values.get("g", 1)
    for key in ("g", "ic", "oc", "sd", "sh", "sw"):
        v = values.get(key, None if key in ("ic", "oc") else 1)
        if v is None:
            raise SpecError(f"the descriptor has no {key} ({FIELD_HELP[key]}); it is required.", key)
        if v <= 0:
            raise SpecError(f"{key} ({FIELD_HELP[key]}) must be a positive whole number, got {v}.", key)
    if "mb" in values and values["mb"] <= 0:
        raise SpecError(f"mb ({FIELD_HELP['mb']}) must be a positive whole number, got {values['mb']}.", "mb")

    dim: dict[str, dict[str, int]] = {}
    present = {}
    for x in ("d", "h", "w"):
        v = {c: values.get(f"{c}{x}", 0) for c in "iokd"}
        v["s"] = values.get(f"s{x}", 1)
        v["p"] = values.get(f"p{x}", -1)
        # benchdnn: a dim is absent when i, k, o, d are 0, s is 1 and p < 1 (an explicit p0 counts as absent).
        present[x] = bool(v["i"] | v["k"] | v["o"] | v["d"]) or v["s"] != 1 or v["p"] >= 1
        if present[x]:
            for c in "ik":
                if v[c] <= 0:
                    if f"{c}{x}" in values:  # written as 0 (or less): a size is at least 1
                        raise SpecError(f"{c}{x} ({FIELD_HELP[c + x]}) is {v[c]}; it must be at least 1.", f"{c}{x}")
                    why = {"w": " (w-values copy h-values only when no w-value is written at all)",
                           "h": " (h- and w-values copy d-values only when none of them is written)"}.get(x, "")
                    raise SpecError(
                        f"{c}{x} ({FIELD_HELP[c + x]}) was not given, but other {_DIM_WORD[x]} values are, so it "
                        f"is required{why}.", f"{c}{x}")
            span = (v["k"] - 1) * (v["d"] + 1) + 1
            if not v["o"]:
                v["p"] = max(v["p"], 0)
                v["o"] = _cdiv(v["i"] - span + 2 * v["p"], v["s"]) + 1
                if v["o"] <= 0:
                    raise SpecError(
                        f"k{x}={v['k']} with dilation d{x}={v['d']} spans {span} pixels, more than the padded input "
                        f"{v['i'] + 2 * v['p']} (i{x}={v['i']} + 2*p{x}={v['p']}), so the output {_DIM_WORD[x]} "
                        f"would be {v['o']}.", f"k{x}")
            elif v["p"] < 0:
                v["p"] = _cdiv((v["o"] - 1) * v["s"] - v["i"] + span, 2)
        dim[x] = v
    if not present["d"] and not present["h"] and not present["w"]:
        raise SpecError(f"the descriptor has no ih ({FIELD_HELP['ih']}) and no kh; they are required.", "ih")
    if present["d"]:
        ndims = 5
        if not present["h"] and not present["w"]:
            dim["h"] = dict(dim["d"])
            dim["w"] = dict(dim["d"])
        elif not (present["h"] and present["w"]):
            missing = "w" if present["h"] else "h"
            raise SpecError(
                f"a 3-D descriptor needs either all h- and w-values or none of them (benchdnn's rule); "
                f"i{missing} and k{missing} are missing.", f"i{missing}")
    elif present["h"]:
        ndims = 4
        if not present["w"]:
            dim["w"] = dict(dim["h"])
    else:
        ndims = 3
    neutral = dict(i=1, o=1, k=1, s=1, p=0, d=0)
    if ndims < 5:
        dim["d"] = dict(neutral)
    if ndims < 4:
        dim["h"] = dict(neutral)

    kw = {}
    for x in ("d", "h", "w"):
        v = dim[x]
        span = (v["k"] - 1) * (v["d"] + 1) + 1
        pr = (v["o"] - 1) * v["s"] - v["i"] + span - v["p"]
        if x in DIMS_OF[ndims]:
            if v["p"] < 0:
                raise SpecError(
                    f"o{x}={v['o']} implies a left pad p{x}={v['p']} (benchdnn's ((o-1)*s - i + span)/2): negative "
                    f"left padding is refused by oneDNN, and PyTorch has no way to express it in a convolution.",
                    f"p{x}")
            if pr + v["s"] <= 0:
                raise SpecError(
                    f"o{x}={v['o']} implies a right pad of {pr} along the {_DIM_WORD[x]}; oneDNN requires the right "
                    f"pad plus the stride s{x}={v['s']} to be above 0.", f"o{x}")
        kw.update({f"i{x}": v["i"], f"k{x}": v["k"], f"s{x}": v["s"], f"p{x}": v["p"], f"d{x}": v["d"]})
        sym = out_size(v["i"], v["k"], v["s"], v["p"], v["d"]) == v["o"]
        kw[f"p{x}_r"] = None if sym else pr
    return ConvSpec(mb=values.get("mb", 2), g=g, ic=values["ic"], oc=values["oc"], name=name, ndims=ndims, **kw)


def combination_refusal(direction: str, dtype: str, post_ops: str, io_tag: str, tag_word: str = "") -> str:
    """'WORD: why' when words each honoured alone ask for something no path times together, else ''.
    A batch turns it into a refused problem naming the word; a spec refuses to validate."""
    backward = direction in BACKWARD_DIRECTIONS
    int8 = dtype in INT8_DTYPES
    if post_ops and backward:  # oneDNN's post-ops are forward attributes
        return (f"--attr-post-ops={post_ops}: post-ops apply to the forward conv, and --dir={direction} times the "
                "conv's backward, which has none; drop the word or give a forward --dir.")
    if int8 and backward:  # PyTorch's int8 convs are inference ops
        return (f"--dir={direction}: PyTorch's int8 convs ({dtype}) are inference ops with no backward; give a "
                "forward --dir or a float --dt.")
    if int8 and (post_ops or io_tag):  # the int8 paths run the plain conv, on a channels_last input
        word = f"--attr-post-ops={post_ops}" if post_ops else (tag_word or f"--stag/--dtag={io_tag}")
        return (f"{word}: not timed with an int8 config ({dtype}) yet: the int8 paths run the plain conv on a "
                "channels_last input; drop the word or give a float --dt.")
    return ""


def parse_descriptor(text: str, *, dtype: str | None = None, bias: bool | None = None, sizes: bool = True,
                     direction: str | None = None) -> ConvSpec:
    """Parse a benchdnn conv descriptor (short or long form, or a pasted verbose/batch line) into a valid spec.
    sizes=False: no allocation limits (listing mode; nothing is allocated). direction: a --dir value that
    overrides the line's own (None: the line's --dir, or benchdnn's default FWD_B)."""
    if not isinstance(text, str) or not text.strip():
        raise SpecError("the descriptor is empty; give one like mb2ic16ih14oc16oh14kh3ph1.", "desc")
    check_options(text)
    opts = _options(text)
    problem = _extract_problem(text)
    if not problem:
        raise SpecError("the descriptor is empty; give one like mb2ic16ih14oc16oh14kh3ph1.", "desc")
    spec = parse_problem(problem, sizes)
    if "mb" in opts and opts["mb"].isdigit() and int(opts["mb"]) > 0:
        spec = spec.replace(mb=int(opts["mb"]))
    hints = descriptor_hints(text)
    for key in ("attr-scales", "attr-zero-points"):
        if opts.get(key) and (dtype or hints.get("dtype") or "f32") not in INT8_DTYPES:
            raise SpecError(f"--{key}={opts[key][:30]}: scales and zero points apply to an int8 config "
                            f"(--cfg=u8s8u8 or --dt=u8:s8:u8); drop the word to time the float conv without it.",
                            "desc")
    direction = (direction or hints.get("direction") or "FWD_B").upper()
    if bias is None:
        bias = hints.get("bias", has_bias(direction))
    spec = spec.replace(dtype=dtype or hints.get("dtype") or "f32", bias=bias, direction=direction,
                        post_ops=post_ops.canonical(opts.get("attr-post-ops", "")),
                        io_tag=_io_tag(opts.get("stag", "any"), opts.get("dtag", "any")),
                        scales=opts.get("attr-scales", ""), zero_points=opts.get("attr-zero-points", ""))
    return spec.validate(sizes)


def _io_tag(stag: str, dtag: str) -> str:
    try:
        return benchdnn_options.io_tag(stag, dtag)
    except ValueError as e:
        raise SpecError(f"{e}.", "desc") from None


def descriptor_hints(text: str) -> dict:
    """dtype and bias that a pasted line states itself: benchdnn options (--dt, --cfg, --dir) or a oneDNN
    verbose line's src data type and bia argument. Keys are present only when the line says so."""
    hints: dict = {}
    opts = _options(text)
    raw = opts.get("dt") or opts.get("cfg")
    if raw:
        dt = benchdnn_options.uniform_dtype(raw) or int8_dtype(raw)
        if dt is None:
            raise SpecError(benchdnn_options.option_refusal(f"--dt={raw}"), "dtype")
        hints["dtype"] = dt
    if "dir" in opts or "bia-dt" in opts or "bia_dt" in opts:
        hints["bias"] = has_bias(opts.get("dir", "FWD_B"), opts.get("bia-dt", opts.get("bia_dt", "undef")))
    if "dir" in opts:
        hints["direction"] = opts["dir"].upper()
    if re.search(r"(?:onednn|dnnl|mkldnn)_verbose,", text):
        m = re.search(r"\bsrc[:_](f32|bf16|f16)\b", text)
        if m:
            hints["dtype"] = m.group(1)
        m = re.search(r"\bbia[:_]([a-z0-9]+)", text)
        if m:
            hints["bias"] = m.group(1) != "undef"
        m = re.search(r",(forward_inference|backward_data|backward_weights),", text)
        if m:  # the primitive's prop kind is the direction (a backward_weights line with a bias is BWD_WB)
            hints["direction"] = {"forward_inference": "FWD_I", "backward_data": "BWD_D"}.get(
                m.group(1), "BWD_WB" if hints.get("bias") else "BWD_W")
    return hints


def has_bias(direction: str, bia_dt: str = "undef") -> bool:
    """benchdnn's rule (bench_conv.cpp, res.hpp): FWD_B and BWD_WB always carry a bias; the other directions
    only when --bia-dt names a data type (FWD_I and FWD_D have none by default)."""
    return direction.upper() in ("FWD_B", "BWD_WB") or bia_dt.lower() != "undef"


def parse_dtype(text: str) -> str:
    value = text.strip().lower()
    aliases = {"float32": "f32", "float": "f32", "fp32": "f32", "bfloat16": "bf16", "float16": "f16", "half": "f16", "fp16": "f16"}
    value = aliases.get(value, value)
    if int8_dtype(value):
        return int8_dtype(value)
    if value not in DTYPES:
        raise SpecError(f"dtype must be one of {', '.join(DTYPES)}, got {text!r}.", "dtype")
    return value
