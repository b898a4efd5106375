import os

import pytest

# Qt tests run without a display.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(scope="session")
def f32_block() -> int:
    """The channel block oneDNN's f32 direct convolution uses on this CPU: one vector register of floats,
    16 with AVX-512 (aBcd16b = nChw16c), 8 with AVX2 (aBcd8b = nChw8c).

    Read from the CPU flags, not from the code under test, so a test can compare what the product reports
    (descriptor, trace, bytes) with an expectation computed on its own. The machine changes between
    sessions: never hard-code 16.
    """
    from explorer.core.measure import machine

    flags = machine.cpu_flags()
    if "avx512f" in flags:
        return 16
    if "avx2" in flags:
        return 8
    pytest.skip("this CPU has neither AVX-512 (avx512f) nor AVX2: no known f32 blocked conv layout to expect")
