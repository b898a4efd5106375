import os
import re
import subprocess
import sys
from dataclasses import dataclass

import pytest

# Qt tests run without a display.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# A 2x17x5x4 conv through torch.utils.mkldnn.to_mkldnn(module), f32 and bf16, in a fresh process with oneDNN
# verbose on: the exec lines say which format each conv really wrote its output in on this CPU (and under the
# ONEDNN_MAX_CPU_ISA this test run was started with).
_PROBE = r"""
import torch, torch.nn as nn
from torch.utils import mkldnn as mu
for dt in (torch.float32, torch.bfloat16):
    for oc in (17, 3, 33):
        torch.manual_seed(0)
        try:
            m = mu.to_mkldnn(nn.Conv2d(17, oc, 3, padding=1).eval(), dt)
        except RuntimeError:
            continue  # no bf16 in oneDNN on this CPU
        with torch.no_grad():
            m(torch.randn(2, 17, 5, 4).to(dt).to_mkldnn())
"""
_EXEC = re.compile(r"primitive,exec,cpu,convolution,([^,]+),[^,]*,src:(\w+):\S*.* dst:\w+:\w*:blocked:(\w+):.*,"
                   r"mb2_ic17oc(\d+)_")


@dataclass(frozen=True)
class ConvOutput:
    """The format oneDNN wrote a conv output in: its tag and channel block (None: plain, no inner block)."""

    tag: str
    impl: str

    @property
    def block(self) -> int | None:
        m = re.fullmatch(r"aBcd(\d+)b", self.tag)
        return int(m[1]) if m else None

    def padded(self, c: int) -> int:
        b = self.block
        return -(-c // b) * b if b else c


@pytest.fixture(scope="session")
def conv_outputs() -> dict[tuple[int, str], ConvOutput]:
    """{(oc, "f32"/"bf16"): ConvOutput} of 2x17x5x4 -> oc convs with 3x3 weights, as oneDNN's verbose reports.

    Read from oneDNN in a fresh process, not from the code under test and not guessed from CPU flags: the
    block is 16 with AVX-512, 8 with AVX2, none (plain `abcd`) on an SSE4.1 gemm kernel and none (plain
    `acdb`) for bf16 on AMX. The tests compare what the product reports with this.
    """
    env = dict(os.environ, ONEDNN_VERBOSE="1")
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got = {}
    for line in out.stdout.splitlines():
        m = _EXEC.search(line)
        if m:
            got[(int(m[4]), m[2])] = ConvOutput(m[3], m[1])
    assert (17, "f32") in got, "oneDNN printed no exec line for the f32 probe conv:\n" + out.stdout[-2000:]
    return got


@pytest.fixture(scope="session")
def f32_conv(conv_outputs) -> ConvOutput:
    """The 2x17x5x4 -> 17 f32 conv output (FIELD_GUIDE's example) as oneDNN writes it on this CPU."""
    return conv_outputs[(17, "f32")]


@pytest.fixture(scope="session")
def f32_block(f32_conv) -> int:
    """The channel block of f32_conv: 16 with AVX-512 (aBcd16b = nChw16c), 8 with AVX2 (aBcd8b = nChw8c).
    Tests of drawing a blocked, padded buffer skip where oneDNN writes that output plain (e.g. SSE4.1)."""
    if f32_conv.block is None:
        pytest.skip(f"oneDNN writes this conv's output plain ({f32_conv.tag}, {f32_conv.impl}) here: no channel block")
    return f32_conv.block
