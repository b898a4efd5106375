"""The convolution spec, its benchdnn descriptor (parse and print), validation and op count.

benchdnn conventions (tests/benchdnn/doc/driver_conv.md in oneDNN): defaults g=1, mb=2, stride 1,
dilation 0 (0-based: PyTorch dilation d is benchdnn d-1), w-values copy h-values when absent, oh/ph
computed when absent, and a given oh must agree with the computed one.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

from explorer.core.errors import SpecError

DTYPES = ("f32", "bf16", "f16")
SPATIAL_KEYS = ("ih", "iw", "oh", "ow", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw")
KNOWN_KEYS = ("g", "mb", "ic", "oc") + SPATIAL_KEYS + ("id", "od", "kd", "sd", "pd", "dd")
# Fields a user may set or sweep, in descriptor order.
SPEC_FIELDS = ("mb", "g", "ic", "ih", "iw", "oc", "oh", "ow", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw")
# Larger numbers than this in a single field are refused before anything is allocated.
MAX_FIELD_VALUE = 1 << 24
MAX_TENSOR_ELEMENTS = 1 << 36

_TOKEN = re.compile(r'_*(?:(n)"([^"]*)"|([a-z]+)(-?\d+))_*')

FIELD_HELP = {
    "mb": "minibatch size (images per call)",
    "g": "groups (must divide ic and oc)",
    "ic": "input channels",
    "ih": "input height",
    "iw": "input width",
    "oc": "output channels",
    "oh": "output height",
    "ow": "output width",
    "kh": "kernel height",
    "kw": "kernel width",
    "sh": "stride along height",
    "sw": "stride along width",
    "ph": "padding along height (each side)",
    "pw": "padding along width (each side)",
    "dh": "dilation along height, 0-based as in benchdnn (PyTorch dilation = dh + 1)",
    "dw": "dilation along width, 0-based as in benchdnn (PyTorch dilation = dw + 1)",
}


def out_size(i: int, k: int, s: int, p: int, d: int) -> int:
    """Output extent of one spatial dim (PyTorch's floor formula, symmetric padding, 0-based d)."""
    return (i + 2 * p - ((k - 1) * (d + 1) + 1)) // s + 1


def _taps_inside(i: int, o: int, k: int, s: int, p: int, d: int) -> int:
    """Kernel taps, summed over all outputs of one dim, that land inside the input (not padding)."""
    total = 0
    for oi in range(o):
        start = oi * s - p
        for ki in range(k):
            if 0 <= start + ki * (d + 1) < i:
                total += 1
    return total


@dataclass(frozen=True)
class ConvSpec:
    """One 2-D convolution problem. Dilation dh/dw is 0-based as in benchdnn."""

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

    # ---- derived values -------------------------------------------------------------------
    @property
    def oh(self) -> int:
        return out_size(self.ih, self.kh, self.sh, self.ph, self.dh)

    @property
    def ow(self) -> int:
        return out_size(self.iw, self.kw, self.sw, self.pw, self.dw)

    @property
    def torch_dilation(self) -> tuple[int, int]:
        return (self.dh + 1, self.dw + 1)

    @property
    def input_shape(self) -> tuple[int, int, int, int]:
        return (self.mb, self.ic, self.ih, self.iw)

    @property
    def weight_shape(self) -> tuple[int, int, int, int]:
        return (self.oc, self.ic // self.g, self.kh, self.kw)

    @property
    def output_shape(self) -> tuple[int, int, int, int]:
        return (self.mb, self.oc, self.oh, self.ow)

    @property
    def itemsize(self) -> int:
        return 4 if self.dtype == "f32" else 2

    @property
    def ops(self) -> int:
        """benchdnn's op count: 2 * mb * oc * ic/g * (kernel taps landing inside the input)."""
        sp = _taps_inside(self.ih, self.oh, self.kh, self.sh, self.ph, self.dh) * _taps_inside(
            self.iw, self.ow, self.kw, self.sw, self.pw, self.dw
        )
        return 2 * self.mb * self.oc * (self.ic // self.g) * sp

    def get(self, field: str):
        if field in ("oh", "ow"):
            return getattr(self, field)
        return getattr(self, field)

    def replace(self, **changes) -> ConvSpec:
        return dataclasses.replace(self, **changes)

    # ---- descriptor -------------------------------------------------------------------------
    def descriptor(self, long: bool = False, with_name: bool = True) -> str:
        """benchdnn form. Short: defaults and w-values equal to h-values left out. Long: every key."""
        name = f'n"{self.name}"' if (with_name and self.name) else ""
        if long:
            body = (
                f"mb{self.mb}_g{self.g}ic{self.ic}oc{self.oc}"
                f"_ih{self.ih}oh{self.oh}kh{self.kh}sh{self.sh}dh{self.dh}ph{self.ph}"
                f"_iw{self.iw}ow{self.ow}kw{self.kw}sw{self.sw}dw{self.dw}pw{self.pw}"
            )
            return body + (f"_{name}" if name else "")
        parts = []
        if self.g != 1:
            parts.append(f"g{self.g}")
        parts.append(f"mb{self.mb}ic{self.ic}ih{self.ih}")
        if self.iw != self.ih:
            parts.append(f"iw{self.iw}")
        parts.append(f"oc{self.oc}oh{self.oh}")
        if self.ow != self.oh or self.iw != self.ih:
            parts.append(f"ow{self.ow}")
        parts.append(f"kh{self.kh}")
        if self.kw != self.kh:
            parts.append(f"kw{self.kw}")
        if self.sh != 1:
            parts.append(f"sh{self.sh}")
        if self.sw != self.sh:
            parts.append(f"sw{self.sw}")
        if self.dh != 0:
            parts.append(f"dh{self.dh}")
        if self.dw != self.dh:
            parts.append(f"dw{self.dw}")
        parts.append(f"ph{self.ph}")
        if self.pw != self.ph:
            parts.append(f"pw{self.pw}")
        return "".join(parts) + name

    @property
    def desc(self) -> str:
        """Canonical short descriptor without the name (the CSV's `desc` column)."""
        return self.descriptor(with_name=False)

    def __str__(self) -> str:
        return self.descriptor()

    # ---- validation -------------------------------------------------------------------------
    def validate(self) -> ConvSpec:
        """Raise SpecError with one sentence naming the field when the spec cannot run."""
        for f in SPEC_FIELDS:
            if f in ("oh", "ow"):
                continue
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool):
                raise SpecError(f"{f} must be a whole number, got {v!r}.", f)
            low = 0 if f in ("ph", "pw", "dh", "dw") else 1
            if v < low:
                what = "at least 0" if low == 0 else "a positive whole number"
                raise SpecError(f"{f} ({FIELD_HELP[f]}) must be {what}, got {v}.", f)
            if v > MAX_FIELD_VALUE:
                raise SpecError(f"{f}={v} is too large to allocate; the limit is {MAX_FIELD_VALUE}.", f)
        if self.dtype not in DTYPES:
            raise SpecError(f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}.", "dtype")
        if self.ic % self.g:
            raise SpecError(f"g={self.g} does not divide ic={self.ic}: groups must divide the input channels.", "g")
        if self.oc % self.g:
            raise SpecError(f"g={self.g} does not divide oc={self.oc}: groups must divide the output channels.", "g")
        for dim, i, k, p, d in (("h", self.ih, self.kh, self.ph, self.dh), ("w", self.iw, self.kw, self.pw, self.dw)):
            span = (k - 1) * (d + 1) + 1
            if span > i + 2 * p:
                raise SpecError(
                    f"k{dim}={k} with dilation d{dim}={d} spans {span} pixels, more than the padded input "
                    f"{i + 2 * p} (i{dim}={i} + 2*p{dim}={p}).",
                    f"k{dim}",
                )
        for shape_name, shape in (("input", self.input_shape), ("weight", self.weight_shape), ("output", self.output_shape)):
            if math.prod(shape) > MAX_TENSOR_ELEMENTS:
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


def _options(text: str) -> dict[str, str]:
    """benchdnn options on the same line (--dt=bf16, --cfg=bf16bf16bf16, --dir=FWD_D, --mb=1)."""
    opts = {}
    for word in strip_comment(text).split():
        if word.startswith("--") and "=" in word:
            k, v = word[2:].split("=", 1)
            opts[k] = v
    return opts


def parse_descriptor(text: str, *, dtype: str | None = None, bias: bool | None = None) -> ConvSpec:
    """Parse a benchdnn conv descriptor (short or long form, or a pasted verbose/batch line) into a valid spec."""
    if not isinstance(text, str) or not text.strip():
        raise SpecError("the descriptor is empty; give one like mb2ic16ih14oc16oh14kh3ph1.", "desc")
    opts = _options(text)
    problem = _extract_problem(text)
    if not problem:
        raise SpecError("the descriptor is empty; give one like mb2ic16ih14oc16oh14kh3ph1.", "desc")
    values: dict[str, int] = {}
    name = ""
    pos = 0
    while pos < len(problem):
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
        if len(raw.lstrip("-")) > 12:
            raise SpecError(f"{key}={raw} is too large to allocate; the limit is {MAX_FIELD_VALUE}.", key)
        values[key] = _parse_int(key, raw)
    for key, neutral in (("id", 1), ("od", 1), ("kd", 1), ("sd", 1), ("pd", 0), ("dd", 0)):
        if values.get(key, neutral) != neutral:
            raise SpecError(f"{key}={values[key]} describes a 3-D convolution; only 2-D convolutions are supported.", key)
    for required in ("ic", "oc"):
        if required not in values:
            raise SpecError(f"the descriptor has no {required} ({FIELD_HELP[required]}); it is required.", required)
    if "iw" not in values and "ih" not in values:
        raise SpecError(f"the descriptor has no ih ({FIELD_HELP['ih']}); it is required.", "ih")
    if "kw" not in values and "kh" not in values:
        raise SpecError(f"the descriptor has no kh ({FIELD_HELP['kh']}); it is required.", "kh")
    if "mb" in opts:
        values["mb"] = _parse_int("mb", opts["mb"]) if opts["mb"].isdigit() else values.get("mb", 2)

    one_d = "ih" not in values and "kh" not in values  # benchdnn's 1-D form: only w-values given
    if one_d:
        values.update(ih=1, kh=1, oh=values.get("oh", 1), ph=values.get("ph", 0))
    elif "kh" not in values:
        raise SpecError(f"the descriptor has no kh ({FIELD_HELP['kh']}); it is required.", "kh")
    elif "ih" not in values:
        raise SpecError(f"the descriptor has no ih ({FIELD_HELP['ih']}); it is required.", "ih")

    def h_or_w(hkey: str, wkey: str, default: int) -> tuple[int, int]:
        # w-values copy h-values when absent; never the other way round.
        h = values.get(hkey, default)
        return h, values.get(wkey, h)

    ih, iw = h_or_w("ih", "iw", 0)
    kh, kw = h_or_w("kh", "kw", 0)
    sh, sw = h_or_w("sh", "sw", 1)
    dh, dw = h_or_w("dh", "dw", 0)
    oh_given = values.get("oh")
    ow_given = values.get("ow", oh_given if "iw" not in values else None)

    def computed_pad(i, o, k, s, d) -> int:
        # benchdnn computes the padding that makes a given output size come out.
        if o is None:
            return 0
        return max(0, math.ceil(((o - 1) * s - i + (k - 1) * (d + 1) + 1) / 2))

    ph = values["ph"] if "ph" in values else computed_pad(ih, oh_given, kh, sh, dh)
    if "pw" in values:
        pw = values["pw"]
    elif "ph" in values or "ow" not in values:
        pw = ph
    else:
        pw = computed_pad(iw, ow_given, kw, sw, dw)

    hints = descriptor_hints(text)
    spec_dtype = dtype or hints.get("dtype") or "f32"
    spec_bias = bias if bias is not None else hints.get("bias", True)
    spec = ConvSpec(
        mb=values.get("mb", 2), g=values.get("g", 1), ic=values["ic"], ih=ih, iw=iw, oc=values["oc"],
        kh=kh, kw=kw, sh=sh, sw=sw, ph=ph, pw=pw, dh=dh, dw=dw,
        bias=spec_bias, dtype=spec_dtype, name=name,
    ).validate()
    for key, given, computed, parts in (
        ("oh", oh_given, spec.oh, (ih, kh, sh, ph, dh, "h")),
        ("ow", ow_given, spec.ow, (iw, kw, sw, pw, dw, "w")),
    ):
        if given is not None and given != computed:
            i, k, s, p, d, x = parts
            raise SpecError(
                f"{key}={given} does not match the output size {computed} computed from "
                f"i{x}={i}, k{x}={k}, s{x}={s}, p{x}={p}, d{x}={d}.",
                key,
            )
    return spec


def descriptor_hints(text: str) -> dict:
    """dtype and bias that a pasted line states itself: benchdnn options (--dt, --cfg, --dir) or a oneDNN
    verbose line's src data type and bia argument. Keys are present only when the line says so."""
    hints: dict = {}
    opts = _options(text)
    raw = opts.get("dt") or opts.get("cfg")
    if raw:
        dt = next((d for d in ("bf16", "f16", "f32") if raw.startswith(d)), None)
        if dt is None:
            raise SpecError(f"benchdnn data type {raw!r} is not supported; use f32, bf16 or f16.", "dtype")
        hints["dtype"] = dt
    if "dir" in opts:
        hints["bias"] = opts["dir"].upper() != "FWD_D"
    if re.search(r"(?:onednn|dnnl|mkldnn)_verbose,", text):
        m = re.search(r"\bsrc[:_](f32|bf16|f16)\b", text)
        if m:
            hints["dtype"] = m.group(1)
        m = re.search(r"\bbia[:_]([a-z0-9]+)", text)
        if m:
            hints["bias"] = m.group(1) != "undef"
    return hints


def parse_dtype(text: str) -> str:
    value = text.strip().lower()
    aliases = {"float32": "f32", "float": "f32", "fp32": "f32", "bfloat16": "bf16", "float16": "f16", "half": "f16", "fp16": "f16"}
    value = aliases.get(value, value)
    if value not in DTYPES:
        raise SpecError(f"dtype must be one of {', '.join(DTYPES)}, got {text!r}.", "dtype")
    return value
