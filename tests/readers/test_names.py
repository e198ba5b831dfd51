"""Kernel-name helpers: argument-list stripping and bare identifiers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simsample.io.names import base_name, strip_args


@pytest.mark.parametrize(
    "name, expected",
    [
        ("void foo<int>(float*, int)", "void foo<int>"),
        (
            "void at::native::(anonymous namespace)::foo<float, 4>(float*, int)",
            "void at::native::(anonymous namespace)::foo<float, 4>",
        ),
        ("volta_sgemm_128x64_nn", "volta_sgemm_128x64_nn"),
        ("k(void (*)(int), int)", "k"),
        ("Foo::bar(int) const", "Foo::bar"),
        ("(anonymous namespace)::kernel()", "(anonymous namespace)::kernel"),
    ],
)
def test_strip_args(name, expected):
    assert strip_args(name) == expected


def test_strip_args_does_not_cut_at_first_paren():
    # the STEM artifact's name.split("(")[0] would give "void at::native::"
    a = strip_args("void at::native::(anonymous namespace)::reduce_kernel<512>(float*)")
    b = strip_args("void at::native::(anonymous namespace)::softmax<float>(float*)")
    assert a != b


@pytest.mark.parametrize(
    "name, expected",
    [
        ("_Z12sgemm_kernelPKfS0_Pfiii", "sgemm_kernel"),
        ("_Z4tinyPi", "tiny"),
        (
            "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_",
            "vectorized_elementwise_kernel",
        ),
        ("sgemm_kernel(float const*, float const*, float*, int, int, int)", "sgemm_kernel"),
        ("void at::native::(anonymous namespace)::foo<float, 4>(float*, int)", "foo"),
        ("volta_sgemm_128x64_nn", "volta_sgemm_128x64_nn"),
    ],
)
def test_base_name(name, expected):
    assert base_name(name) == expected


@given(st.text(alphabet="abcdefgh_:<>(), *&0123456789", max_size=60))
def test_helpers_never_fail_and_never_grow(name):
    assert len(strip_args(name)) <= len(name)
    assert isinstance(base_name(name), str)


@given(
    st.from_regex(r"[a-z_][a-z0-9_]{0,15}", fullmatch=True),
    st.lists(st.sampled_from(["int", "float*", "const char*"]), max_size=4),
)
def test_strip_args_removes_exactly_the_argument_list(ident, args):
    assert strip_args(f"void {ident}({', '.join(args)})") == f"void {ident}"
    assert base_name(f"void {ident}({', '.join(args)})") == ident
