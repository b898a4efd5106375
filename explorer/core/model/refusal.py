"""One status word per kind of mode failure: `unsupported` when torch (or the model's own code run the mode's
way) refuses the model, `error` when the tool's own code crashed. On main the word came from the message's
wording alone, so the same refusal (an op fed MKLDNN tensors) was `unsupported` for one op and `error` for
another ("'memory_format' argument is incompatible with mkldnn tensor")."""

from __future__ import annotations

import os
import traceback

import explorer

_OWN = os.path.dirname(os.path.abspath(explorer.__file__)) + os.sep
# what a bug in Python code raises; torch's C++ refusals reach the calling line as RuntimeError or
# NotImplementedError, so those are a refusal even when that line is the tool's
_CRASH_TYPES = (AttributeError, NameError, TypeError, KeyError, IndexError, ValueError, ZeroDivisionError,
                AssertionError, UnboundLocalError, RecursionError)


def raised_in_tool(exc: BaseException) -> bool:
    """The innermost frame of the exception's traceback is in the explorer package."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and os.path.abspath(frames[-1].filename).startswith(_OWN)


def failure_status(exc: BaseException) -> str:
    """`unsupported`: torch's converter, tracer, compiler or an op refused the model, or the model's own code
    failed under the mode (the mode cannot take it), or the tool refused on torch's behalf (NotImplementedError,
    PathUnsupported); `error`: a Python crash (_CRASH_TYPES) raised by the tool's own code."""
    from explorer.core.paths.base import is_unsupported

    if is_unsupported(exc):
        return "unsupported"
    return "error" if raised_in_tool(exc) and isinstance(exc, _CRASH_TYPES) else "unsupported"
