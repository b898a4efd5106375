"""Issue 32: --attr-post-ops is honoured (a post_ops field and column) or refused by name, never dropped."""

import pytest

from explorer.core.errors import SpecError
from explorer.core.problem.batch import parse_batch
from explorer.core.problem.post_ops import canonical
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import CSV_COLUMNS, Result
from explorer.core.report.roofline import spec_from_row
from explorer.core.session.store import spec_from_dict, spec_to_dict

DESC = "mb1ic8ih8oc8oh8kh3ph1"


@pytest.mark.parametrize("value, want", [
    ("relu", "relu"), ("RELU", "relu"), ("relu:0.5", "relu:0.5"), ("sum", "sum"), ("sum:1", "sum"),
    ("sum:0.5", "sum:0.5"), ("sum+relu", "sum+relu"), ("sum:0.5+relu:0.25", "sum:0.5+relu:0.25"),
    ("gelu_erf", "gelu_erf"), ("gelu_tanh", "gelu_tanh"), ("sigmoid", "logistic"), ("logistic", "logistic"),
    ("tanh", "tanh"), ("silu", "swish:1"), ("swish:1", "swish:1"), ("hardtanh:0:6", "clip:0:6"),
    ("clip:-1:1", "clip:-1:1"), ("elu:1", "elu:1"), ("relu+sum", "relu+sum"), ("sum:2:0:undef", "sum:2"),
])
def test_a_benchdnn_post_op_is_honoured_in_its_canonical_form(value, want):
    assert canonical(value) == want
    spec = parse_descriptor(f"--attr-post-ops={value} {DESC}")
    assert spec.post_ops == want and spec.desc == parse_descriptor(DESC).desc


@pytest.mark.parametrize("value, words", [
    ("add:f32", "binary"), ("mul:f32:per_oc", "binary"), ("prelu", "prelu"), ("prelu:per_oc", "prelu"),
    ("dw:k3s1p1", "depthwise"), ("square", "square"), ("relu_dst", "relu_dst"), ("clip", "ALPHA:BETA"),
    ("swish", "ALPHA"), ("sum:1:3", "zero point"), ("sum:1:0:s8", "data type"), ("relu:x", "not a number"),
    ("relu+", "empty"), ("tanh:1", "no parameter"),
])
def test_an_unsupported_post_op_is_refused_in_one_sentence_naming_it(value, words):
    with pytest.raises(SpecError) as e:
        parse_descriptor(f"--attr-post-ops={value} {DESC}")
    msg = str(e.value)
    assert msg.startswith(f"--attr-post-ops={value}: ") and words in msg
    assert len(msg.rstrip(".").split(". ")) == 1


def test_the_post_ops_column_round_trips_through_a_row_and_a_session():
    spec = parse_descriptor(f"--attr-post-ops=sum:0.5+relu {DESC}")
    row = Result(spec=spec, path="dense", threads=1).row()
    assert "post_ops" in CSV_COLUMNS and row["post_ops"] == "sum:0.5+relu"
    assert (spec_from_row(row).desc, spec_from_row(row).post_ops) == (spec.desc, spec.post_ops)
    assert spec_from_dict(spec_to_dict(spec)) == spec
    # files written before the column: the plain conv
    old = {k: v for k, v in row.items() if k != "post_ops"}
    assert spec_from_row(old).post_ops == ""
    assert spec_from_dict({"desc": spec.descriptor(), "dtype": "f32", "bias": True}).post_ops == ""


def test_a_batch_line_carries_its_post_ops_into_each_problem():
    b = parse_batch(f"--attr-post-ops=,relu,sum+relu\n{DESC}\n")
    assert [p.spec.post_ops for p in b.points] == ["", "relu", "sum+relu"]
    assert not any(p.refused for p in b.points)


def test_a_post_ops_row_is_not_checked_by_a_fresh_script_of_the_plain_conv():
    from explorer.core.process.verify import verifiable

    def row(post):
        return Result(spec=parse_descriptor(f"{post} {DESC}"), path="dense", threads=1, status="ok", median_ms=1.0)

    assert verifiable(row("")) == ""
    assert "post-ops (relu)" in verifiable(row("--attr-post-ops=relu"))
