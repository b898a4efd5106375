"""What the user names, loaded: a built-in network, a package.module:callable, a saved torch.export
program (.pt2) or a TorchScript file, and the --input shape. Every refusal is one InputError sentence."""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from explorer.core.errors import InputError

DEFAULT_INPUT = (1, 3, 224, 224)
MODEL_FILE_SUFFIXES = (".pt2", ".pt", ".ts", ".pth", ".jit", ".torchscript")


@dataclass
class LoadedModel:
    module: object  # nn.Module, ScriptModule or the GraphModule of an exported program
    label: str  # what the user typed, or the built-in's name
    kind: str  # builtin | callable | export | torchscript
    default_input: tuple[int, ...] = DEFAULT_INPUT
    expected_input: tuple[int, ...] | None = None  # an exported program's static input shape


def parse_input(text: str | None) -> tuple[int, ...] | None:
    """'1,3,224,224' -> (1, 3, 224, 224). Raises InputError (one sentence)."""
    if text is None:
        return None
    parts = [p.strip() for p in str(text).replace("x", ",").split(",")]
    if not parts or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise InputError(f"--input {text!r} is not a shape of positive whole numbers such as 1,3,224,224.", "input")
    if len(parts) > 8:
        raise InputError(f"--input {text!r} has {len(parts)} dimensions; a tensor here has at most 8.", "input")
    return tuple(int(p) for p in parts)


def parse_inputs(texts) -> list[tuple[int, ...]] | str | None:
    """What --input says (given once or several times): None, a list of shapes (one per positional input of
    forward), or "package.module:callable", a factory returning the input. Never checked against the convs:
    the input is the model's, which may add dims or channels itself. Raises InputError (one sentence)."""
    if texts is None or isinstance(texts, (str, tuple)) or (texts and all(isinstance(v, int) for v in texts)):
        texts = [] if texts is None else [tuple(texts) if not isinstance(texts, str) else texts]
    texts = [t for t in texts if t is not None and (not isinstance(t, str) or t.strip())]
    if not texts:
        return None
    factories = [t for t in texts if isinstance(t, str) and ":" in t]
    if factories:
        if len(texts) > 1:
            raise InputError(f"--input {factories[0]} is an input factory: give it alone (it returns every input), "
                             "or give shapes only.", "input")
        return factories[0].strip()
    return [tuple(t) if isinstance(t, (tuple, list)) else parse_input(t) for t in texts]


@dataclass
class ModelInput:
    """The model's input: forward(*args, **kwargs). The planner never reads its rank against the convs."""

    args: tuple
    kwargs: dict = field(default_factory=dict)

    def call(self, model):
        return model(*self.args, **self.kwargs)

    def map(self, fn) -> ModelInput:
        """The same input with every floating-point tensor leaf replaced by fn(leaf) (integer ids kept)."""
        import torch

        def leaf(v):
            if isinstance(v, torch.Tensor):
                return fn(v) if v.is_floating_point() else v
            if isinstance(v, (tuple, list)):
                return type(v)(leaf(o) for o in v)
            if isinstance(v, dict):
                return {k: leaf(o) for k, o in v.items()}
            return v

        return ModelInput(tuple(leaf(a) for a in self.args), {k: leaf(v) for k, v in self.kwargs.items()})

    def to_memory_format(self, fmt) -> ModelInput:
        """The input as the channels-last model takes it: tensors of fmt's rank (4 for channels_last, 5 for
        channels_last_3d) in that format, the others as they are."""
        import torch

        rank = 4 if fmt is torch.channels_last else 5
        return self.map(lambda t: t.contiguous(memory_format=fmt) if t.dim() == rank else t)

    def tensors(self) -> list:
        import torch

        out: list = []
        self.map(lambda t: out.append(t) or t)
        return [t for t in out if isinstance(t, torch.Tensor)]

    @property
    def shape(self) -> tuple:
        """The first tensor's shape (the one the tables name)."""
        ts = self.tensors()
        return tuple(ts[0].shape) if ts else ()

    @property
    def label(self) -> str:
        return " + ".join("x".join(map(str, t.shape)) for t in self.tensors())


def make_input(spec, mb: int | None, dtype, default: tuple = DEFAULT_INPUT, folder: str | None = None) -> ModelInput:
    """The model's input from parse_inputs' answer: random tensors (seed 0) of the given shapes (`mb` replaces
    each one's first dim), or what the factory returns (called as factory(mb) when --mb is given): a tensor,
    a tuple/list of positional inputs, or a dict of keyword inputs. Floating leaves are cast to `dtype`."""
    import torch

    if isinstance(spec, str):
        fn = _import_attr(spec, folder)
        if not callable(fn):
            raise InputError(f"--input {spec} is a {type(fn).__name__}, not a callable returning the input.", "input")
        try:
            got = fn(mb) if mb is not None else fn()
        except TypeError as e:
            if mb is not None:
                raise InputError(f"--input {spec}({mb}) raised TypeError: {_first_line(e)}; with --mb the factory is "
                                 f"called with the minibatch: give it a batch argument, or drop --mb.", "input") from None
            raise InputError(f"--input {spec}() raised TypeError: {_first_line(e)}", "input") from None
        except SystemExit as e:  # the factory's own sys.exit: not ours to obey, one sentence
            raise InputError(f"--input {spec}() called sys.exit({e.code!r}) instead of returning the input.",
                             "input") from None
        except KeyboardInterrupt:  # in the measuring process Ctrl+C is ignored: the factory raised it
            raise InputError(f"--input {spec}() raised KeyboardInterrupt instead of returning the input.",
                             "input") from None
        except Exception as e:  # noqa: BLE001 - the user's factory failed: one line
            raise InputError(f"--input {spec}() raised {type(e).__name__}: {_first_line(e)}", "input") from None
        if isinstance(got, torch.Tensor):
            inp = ModelInput((got,))
        elif isinstance(got, dict):
            inp = ModelInput((), dict(got))
        elif isinstance(got, (tuple, list)):
            inp = ModelInput(tuple(got))
        else:
            raise InputError(f"--input {spec}() returned an object of type {type(got).__name__}, not a tensor, a tuple/list of "
                             "inputs or a dict of keyword inputs.", "input")
        if not inp.tensors():
            raise InputError(f"--input {spec}() returned no tensor.", "input")
        return inp.map(lambda t: t.to(dtype))
    from explorer.core.problem.memory import check_input_memory

    shapes = spec or [default]
    gen = torch.Generator().manual_seed(0)
    xs = []
    for s in shapes:
        s = (mb,) + tuple(s[1:]) if mb is not None else tuple(s)
        check_input_memory(s)  # before torch.randn: one sentence, not an allocation traceback
        xs.append(torch.randn(s, generator=gen).to(dtype))
    return ModelInput(tuple(xs))


def _import_attr(text: str, folder: str | None):
    """package.module:attr imported from `folder` (default the current one) or sys.path."""
    from explorer.core.model.libraries.import_failure import library_failure

    mod_name, _, attr = text.partition(":")
    if not mod_name or not attr:
        raise InputError(f"{text!r} is not package.module:callable (both parts are needed).", "model")
    here = folder or os.getcwd()
    if here not in sys.path and (folder or "" not in sys.path):
        sys.path.insert(0, here)  # the current folder (the caller's, in the measuring process), as `python -m` would
    try:
        mod = _import_file(mod_name, here) if mod_name.lower().endswith(".py") else importlib.import_module(mod_name)
    except ModuleNotFoundError as e:
        lib = library_failure(mod_name, e, _first_line(e))  # a library's own missing dependency (timm's torchvision)
        raise InputError(lib or f"no module named {e.name or mod_name!r} (looked in the current folder and "
                         "sys.path).", "model") from None
    except SystemExit as e:  # the module's own sys.exit at import (a script's main guard missing): one line
        raise InputError(f"importing {mod_name} called sys.exit({e.code!r}); guard its script part with "
                         "if __name__ == '__main__':", "model") from None
    except Exception as e:  # noqa: BLE001 - the user's module failed to import: one line, naming the library
        lib = library_failure(mod_name, e, _first_line(e))
        raise InputError(lib or f"importing {mod_name} failed: {type(e).__name__}: {_first_line(e)}",
                         "model") from None
    obj = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InputError(f"module {mod_name!r} has no attribute {attr!r}.", "model")
        obj = getattr(obj, part)
    return obj


def _import_file(name: str, here: str):
    """path/to/models.py imported as module `models`, its folder put on sys.path first so that its own imports
    of its neighbours work, as `python path/to/models.py` would."""
    import importlib.util

    path = Path(name).expanduser()
    path = path if path.is_absolute() else Path(here) / path
    if not path.is_file():
        raise InputError(f"cannot open {name!r}: no such file.", "model")
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod  # dataclasses and pickling look their module up by name
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(path.stem, None)
        raise
    return mod


def load_model(text: str, folder: str | None = None) -> LoadedModel:
    """A built-in name, package.module:callable (imported from `folder`, default the current one, or
    sys.path), or a .pt2 / TorchScript file (relative to `folder`). Raises InputError."""
    from torch import nn

    from explorer.core.model import zoo as model_zoo

    if not isinstance(text, str) or not text.strip():
        raise InputError("no model given; name a built-in (" + ", ".join(model_zoo.BUILTINS)
                         + "), a package.module:callable, or a .pt2 / TorchScript file.", "model")
    text = text.strip()
    name = model_zoo.builtin_name(text)
    if name is not None:
        return LoadedModel(model_zoo.build(name), name, "builtin", model_zoo.BUILTINS[name][1])
    p = Path(text)
    if folder and not p.is_absolute():
        p = Path(folder) / p
    if p.suffix.lower() in MODEL_FILE_SUFFIXES or (p.is_file() and ":" not in text):
        return _load_file(p, text)
    if ":" not in text:
        raise InputError(f"unknown model {text!r}: name a built-in ({', '.join(model_zoo.BUILTINS)}), a "
                         f"package.module:callable, or a .pt2 / TorchScript file.", "model")
    obj = _import_attr(text, folder)
    if isinstance(obj, nn.Module):
        model = obj
    else:
        if not callable(obj):
            raise InputError(f"{text} is a {type(obj).__name__}, not a callable that returns a torch.nn.Module.",
                             "model")
        try:
            model = obj()
        except SystemExit as e:  # the factory's own sys.exit: not ours to obey, one sentence
            raise InputError(f"{text}() called sys.exit({e.code!r}) instead of returning a torch.nn.Module.",
                             "model") from None
        except KeyboardInterrupt:  # in the measuring process Ctrl+C is ignored: the factory raised it
            raise InputError(f"{text}() raised KeyboardInterrupt instead of returning a torch.nn.Module.",
                             "model") from None
        except Exception as e:  # noqa: BLE001
            raise InputError(f"{text}() raised {type(e).__name__}: {_first_line(e)}", "model") from None
        if not isinstance(model, nn.Module):
            raise InputError(f"{text}() returned an object of type {type(model).__name__}, not a torch.nn.Module.",
                             "model")
    model.eval()
    return LoadedModel(model, text, "callable")


def _load_file(p: Path, text: str) -> LoadedModel:
    import torch

    if not p.is_file():
        raise InputError(f"cannot open model file {text!r}: no such file.", "model")
    if p.suffix.lower() == ".pt2":
        try:
            with _torch_logs_silenced():  # torch logs its own traceback of a bad archive before raising
                ep = torch.export.load(str(p))
        except Exception as e:  # noqa: BLE001
            raise InputError(f"cannot load {text!r} as a torch.export program: {type(e).__name__}: "
                             f"{_first_line(e)}", "model") from None
        shape = _export_input_shape(ep)
        return LoadedModel(ep.module(), text, "export", shape or DEFAULT_INPUT, shape)
    try:
        m = torch.jit.load(str(p), map_location="cpu")
    except Exception as e:  # noqa: BLE001
        raise InputError(f"cannot load {text!r} as TorchScript (or a .pt2 torch.export program): "
                         f"{type(e).__name__}: {_first_line(e)}", "model") from None
    return LoadedModel(m.eval(), text, "torchscript")


class _torch_logs_silenced:
    """No logging records below CRITICAL while loading: the tool's one sentence says what went wrong."""

    def __enter__(self):
        import logging

        self._prev = logging.root.manager.disable
        logging.disable(logging.ERROR)

    def __exit__(self, *exc):
        import logging

        logging.disable(self._prev)
        return False


def _export_input_shape(ep) -> tuple[int, ...] | None:
    users = set(ep.graph_signature.user_inputs)
    for n in ep.graph.nodes:
        if n.op == "placeholder" and n.name in users and "val" in n.meta:
            try:
                return tuple(int(d) for d in n.meta["val"].shape)
            except (TypeError, ValueError):  # symbolic dims: no fixed shape
                return None
    return None


def _first_line(e: BaseException) -> str:
    from explorer.core.paths.base import one_line

    return one_line(e)
