"""The command-list grammar of Accel-Sim's trace parser (kernelslist.g)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.errors import FormatError
from simsample_accelsim.kernelslist import (
    KernelEntry,
    Memcpy,
    looks_like_kernelslist,
    parse_kernelslist,
    render,
    shell_unsafe,
)
from tests.helpers import shared_path


def write(tmp_path: Path, text: str | bytes) -> Path:
    p = tmp_path / "kernelslist.g"
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


def test_commands_in_order_and_ignored_lines_with_numbers(tmp_path):
    p = write(
        tmp_path,
        "MemcpyHtoD,0x00007f00,64\n\nkernel-1.traceg\n# note\nMemcpyDtoH,0x1,4\n kernel-2.traceg\nkernel-2.traceg.xz",
    )
    lst = parse_kernelslist(p)
    kinds = [type(c).__name__ for c in lst.commands]
    assert kinds == ["Memcpy", "KernelEntry", "KernelEntry"]
    assert lst.memcpys[0].address == 0x7F00 and lst.memcpys[0].nbytes == 64 and lst.memcpys[0].line == 1
    assert [k.text for k in lst.kernels] == ["kernel-1.traceg", "kernel-2.traceg.xz"]
    assert lst.kernels[1].line == 7  # last line without a newline still counts
    # the simulator skips a leading-space line silently: we report it, as we do comments and DtoH
    assert lst.ignored == [(4, "# note"), (5, "MemcpyDtoH,0x1,4"), (6, " kernel-2.traceg")]
    warnings = lst.ignored_warnings()
    assert warnings[0].startswith("kernelslist.g line 4: ignored by the simulator")


def test_tinytrace3_oddities_are_reported():
    lst = parse_kernelslist(shared_path("simulators", "accelsim", "tinytrace3", "kernelslist.g"))
    assert [n for n, _ in lst.ignored] == [3, 4, 6]
    assert [t for _, t in lst.ignored] == ["# a comment line", "MemcpyDtoH,0x00007f1000000000,65536", "bogus line"]
    assert len(lst.kernels) == 3 and len(lst.memcpys) == 1


@pytest.mark.parametrize(
    "text, fragment, line",
    [
        ("MemcpyHtoD,0x10\nkernel-1.traceg\n", "malformed memcpy", 1),
        ("MemcpyHtoD,0x10,12,3\nkernel-1.traceg\n", "malformed memcpy", 1),
        ("MemcpyHtoD,zz,12\nkernel-1.traceg\n", "malformed memcpy", 1),
        ("kernel-1.traceg \n", "unquoted to a shell", 1),
        ("MemcpyHtoD,0x1,1\nkernel-1.traceg\r\n", "unquoted to a shell", 2),
        ("kernel-1.trace\n", "must end in .traceg", 1),
        ("kernel 1.traceg\n", "unquoted to a shell", 1),
    ],
)
def test_lines_the_simulator_would_fail_on(tmp_path, text, fragment, line):
    with pytest.raises(FormatError) as exc:
        parse_kernelslist(write(tmp_path, text))
    assert fragment in str(exc.value)
    assert exc.value.line == line


def test_memcpys_without_kernel_and_empty_lists(tmp_path):
    with pytest.raises(FormatError, match="memcpys but no kernel"):
        parse_kernelslist(write(tmp_path, "MemcpyHtoD,0x1,4\n"))
    with pytest.raises(FormatError, match="names no kernel"):
        parse_kernelslist(write(tmp_path, "# nothing\n"))
    with pytest.raises(FormatError, match="not a text file"):
        parse_kernelslist(write(tmp_path, b"\xff\xfe\x00kernel"))


def test_shell_unsafe_and_detection():
    assert shell_unsafe("/a/b/kernel-1.traceg") is None
    assert shell_unsafe("/a b/k") == " "
    assert shell_unsafe("/a/$x") == "$"
    assert looks_like_kernelslist(b"MemcpyHtoD,0x1,4\nkernel-1.traceg\n")
    assert not looks_like_kernelslist(b"-kernel name = x\n")
    assert not looks_like_kernelslist(b"\x1f\x8b\x08")


_names = st.integers(1, 500).map(lambda i: f"kernel-{i}.traceg" + ("" if i % 3 else ".xz"))
_memcpys = st.tuples(st.integers(0, 2**48), st.integers(0, 2**32)).map(lambda t: f"MemcpyHtoD,0x{t[0]:016x},{t[1]}")
_junk = st.sampled_from(
    ["# comment", "MemcpyDtoH,0x1,4", "bogus", " kernel-9.traceg", "\tkernel-9.traceg", "Kernel-1.traceg"]
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.one_of(_names, _memcpys, _junk, st.just("")), min_size=1, max_size=40).filter(
        lambda ls: any(x.startswith("kernel") for x in ls)
    )
)
def test_grammar_roundtrip(tmp_path_factory, lines):
    p = tmp_path_factory.mktemp("kl") / "kernelslist.g"
    p.write_text("\n".join(lines) + "\n")
    lst = parse_kernelslist(p)
    expected = [ln for ln in lines if ln.startswith("MemcpyHtoD") or ln.startswith("kernel")]
    assert render(lst.commands) == "".join(ln + "\n" for ln in expected)
    assert [t for _, t in lst.ignored] == [ln for ln in lines if ln and ln not in expected]
    for c in lst.commands:
        assert lines[c.line - 1] == c.text
        assert isinstance(c, (Memcpy, KernelEntry))
