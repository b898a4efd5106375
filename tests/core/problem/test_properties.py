"""Property tests: descriptor parse/print round trips; validation raises only SpecError, whatever the text."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.core.errors import SpecError
from explorer.core.problem.spec import KNOWN_KEYS, ConvSpec, out_size, parse_descriptor

small = st.integers(min_value=1, max_value=40)


@st.composite
def specs(draw):
    g = draw(st.sampled_from([1, 2, 3, 4]))
    return ConvSpec(
        mb=draw(small), g=g, ic=g * draw(st.integers(1, 8)), oc=g * draw(st.integers(1, 8)),
        ih=draw(small), iw=draw(small), kh=draw(st.integers(1, 7)), kw=draw(st.integers(1, 7)),
        sh=draw(st.integers(1, 4)), sw=draw(st.integers(1, 4)), ph=draw(st.integers(0, 4)), pw=draw(st.integers(0, 4)),
        dh=draw(st.integers(0, 3)), dw=draw(st.integers(0, 3)), bias=draw(st.booleans()),
        name=draw(st.text(alphabet=st.characters(blacklist_characters='"\n\r', codec="ascii"), max_size=12)),
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs())
def test_print_then_parse_is_identity_for_every_valid_spec(s):
    try:
        s.validate()
    except SpecError as e:
        assert e.field and str(e).endswith(".")
        return
    for long in (False, True):
        back = parse_descriptor(s.descriptor(long=long), bias=s.bias)
        assert back == s, (s.descriptor(long=long), back)
        assert back.oh == s.oh and back.ops == s.ops


token = st.one_of(
    st.tuples(st.sampled_from(KNOWN_KEYS + ("x", "n", "zz", "")), st.integers(-5, 10**14)).map(lambda kv: f"{kv[0]}{kv[1]}"),
    st.sampled_from(["_", "n\"a\"", "#", "--dir=FWD_D", " ", ",", "\"", "--cfg=f64"]),
)


@settings(max_examples=600, deadline=None)
@given(st.lists(token, max_size=14).map("".join))
def test_any_text_gives_a_spec_or_one_clear_spec_error(text):
    try:
        s = parse_descriptor(text)
    except SpecError as e:
        msg = str(e)
        assert msg and "\n" not in msg and len(msg) < 300
        return
    assert s.validate() is s
    assert parse_descriptor(s.descriptor(), dtype=s.dtype, bias=s.bias) == s


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_unicode_never_escapes_as_another_exception(text):
    try:
        parse_descriptor(text)
    except SpecError:
        pass


# ---- --vary parsing and layout tags: any text gives a result or one InputError sentence ------------------
from explorer.core.errors import InputError  # noqa: E402
from explorer.core.layout.tags import layout_from_tag  # noqa: E402
from explorer.core.problem.sweep_plan import MAX_POINTS, parse_vary  # noqa: E402

vary_text = st.one_of(
    st.text(max_size=30),
    st.tuples(
        st.sampled_from(["mb", "g", "ic", "oc", "ih", "kh", "sh", "ph", "dh", "dtype", "threads", "oh", "zz", ""]),
        st.sampled_from(["=", "", "=="]),
        st.lists(st.one_of(st.integers(-3, 300).map(str), st.sampled_from(["", ":", "x2", "+0", "x1", "+16", "divisors",
                                                                            "bf16", "f64", "1:64:x2", "64:1:x2"])),
                 max_size=5).map(lambda xs: ",".join(xs) if len(xs) % 2 else ":".join(xs)),
    ).map("".join),
)


@settings(max_examples=500, deadline=None)
@given(vary_text)
def test_vary_parsing_gives_values_or_one_input_error(text):
    try:
        v = parse_vary(text)
    except InputError as e:
        assert str(e) and "\n" not in str(e)
        return
    assert v.field and (v.divisors or 0 < len(v.values) <= MAX_POINTS)


tag_text = st.text(alphabet="abcdefABCDEF0123456789x", min_size=1, max_size=12)


@settings(max_examples=500, deadline=None)
@given(tag_text, st.lists(st.integers(1, 40), min_size=1, max_size=6))
def test_any_tag_gives_a_consistent_layout_or_one_input_error(tag, dims):
    try:
        lay = layout_from_tag(tag, tuple(dims))
    except InputError as e:
        assert str(e) and "\n" not in str(e)
        return
    offs = lay.offsets().ravel()
    assert len(set(offs.tolist())) == offs.size  # every element has its own place
    assert offs.min() >= 0 and offs.max() < lay.nbytes // lay.itemsize


# ---- benchdnn's full model (issue 11): 1-D/3-D and right pads round-trip; ops is benchdnn's count ----------
@st.composite
def nd_specs(draw):
    nd = draw(st.sampled_from([3, 4, 5]))
    g = draw(st.sampled_from([1, 2, 3]))
    kw = dict(mb=draw(st.integers(1, 3)), g=g, ic=g * draw(st.integers(1, 3)), oc=g * draw(st.integers(1, 3)),
              ndims=nd, bias=draw(st.booleans()))
    active = {3: "w", 4: "hw", 5: "dhw"}[nd]
    for x in "dhw":
        if x in active:
            kw.update({f"i{x}": draw(st.integers(1, 12)), f"k{x}": draw(st.integers(1, 5)),
                       f"s{x}": draw(st.integers(1, 3)), f"p{x}": draw(st.integers(0, 4)),
                       f"d{x}": draw(st.integers(0, 2)), f"p{x}_r": draw(st.one_of(st.none(), st.integers(-2, 4)))})
        else:
            kw.update({f"i{x}": 1, f"k{x}": 1, f"s{x}": 1, f"p{x}": 0, f"d{x}": 0})
    return ConvSpec(**kw)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nd_specs())
def test_every_valid_nd_spec_round_trips_and_counts_as_benchdnn(s):
    from tests.core.problem.test_spec import _benchdnn_count_ops

    try:
        s.validate()
    except SpecError as e:
        assert e.field and str(e).endswith(".")
        return
    want = s.normalized()
    for text in (s.descriptor(), s.descriptor(long=True), s.benchdnn_descriptor()):
        back = parse_descriptor(text, bias=s.bias)
        assert back == want, (text, back, want)
    # the PyTorch form (conv padding + F.pad) gives exactly benchdnn's output size in every dim
    conv_pad, extra = s.torch_padding()
    for j, x in enumerate(s.dims):
        i, k, st_, _, _, d = s.dim(x)
        left, right = extra[2 * (len(s.dims) - 1 - j)], extra[2 * (len(s.dims) - 1 - j) + 1]
        assert conv_pad[j] >= 0 and i + left + right > 0
        assert out_size(i + left + right, k, st_, conv_pad[j], d) == s.out(x)
    assert s.ops == _benchdnn_count_ops(s)
    assert s.exact_ops <= s.ops  # the shortcut only ever adds padding taps
