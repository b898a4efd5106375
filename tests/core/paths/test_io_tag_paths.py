"""Issue 32: --stag/--dtag=axb (nhwc) asks for channels_last activations and abx (nchw) for plain NCHW: only the
paths that take that layout are timed, the others are refused by name; blocked tags are refused at the line."""

import pytest
import torch

from explorer.core.errors import SpecError
from explorer.core.paths.base import ALL_PATHS, INT8_PATHS, TAG_PATHS, PathUnsupported, Tensors
from explorer.core.paths.registry import prepare
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import Result
from explorer.core.report.roofline import spec_from_row
from explorer.core.session.store import spec_from_dict, spec_to_dict

DESC = "mb1ic8ih8oc8oh8kh3ph1"


@pytest.mark.parametrize("words, tag", [("--stag=axb", "axb"), ("--stag=nhwc", "axb"), ("--dtag=axb", "axb"),
                                        ("--stag=nhwc --dtag=axb", "axb"), ("--stag=abx", "abx"),
                                        ("--stag=nchw --dtag=any", "abx"), ("--stag=any", "")])
def test_the_tags_a_line_gives_are_its_io_tag(words, tag):
    spec = parse_descriptor(f"{words} {DESC}")
    assert spec.io_tag == tag
    row = Result(spec=spec, path="dense", threads=1).row()
    assert row["io_tag"] == tag and spec_from_row(row).io_tag == tag
    assert spec_from_dict(spec_to_dict(spec)) == spec


@pytest.mark.parametrize("words, named", [("--stag=aBx16b", "--stag=aBx16b"), ("--dtag=acdb", "--dtag=acdb"),
                                          ("--stag=axb --dtag=abx", "--stag=axb with --dtag=abx"),
                                          ("--wtag=axb", "--wtag=axb")])
def test_a_tag_no_path_takes_is_refused_by_name(words, named):
    with pytest.raises(SpecError) as e:
        parse_descriptor(f"{words} {DESC}")
    assert str(e.value).startswith(named) and len(str(e.value).rstrip(".").split(". ")) == 1


@pytest.mark.parametrize("tag, layout", [("axb", torch.channels_last), ("abx", torch.contiguous_format)])
def test_only_the_paths_taking_the_layout_run(tag, layout):
    t = Tensors.make(parse_descriptor(f"--stag={tag} {DESC}"))
    for name in ALL_PATHS:
        if name in INT8_PATHS:
            continue  # int8 routes: a float problem is refused before its layout (tests/core/paths/test_int8.py)
        if name in TAG_PATHS[tag]:
            if name == "compiled":
                continue  # seconds of inductor; its input is the same contiguous x as jit_frozen's
            prep = prepare(name, t)
            assert prep.input_tensor.is_contiguous(memory_format=layout), name
            assert prep.call_once().is_contiguous(memory_format=layout), name
        else:
            with pytest.raises(PathUnsupported, match=f"--stag/--dtag={tag}: {name} takes no"):
                prepare(name, t)


def test_a_batch_asking_for_two_layouts_refuses_that_pair_and_times_the_other():
    from explorer.core.problem.batch import parse_batch

    b = parse_batch(f"--stag=abx,axb --dtag=axb\n{DESC}\n")
    (mixed, same) = b.points
    assert mixed.refused and mixed.spec is None and mixed.error.startswith("line 2: --stag=abx with --dtag=axb: ")
    assert not same.refused and same.spec.io_tag == "axb"
