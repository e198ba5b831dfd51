"""Kernel-name handling: argument lists and the short identifier of a kernel.

Samplers group launches by kernel name *without* its argument list. The argument list is the
trailing balanced parenthesised group of a demangled name; cutting at the first ``(`` (as
``name.split("(")[0]`` does) turns ``void at::native::(anonymous namespace)::foo<..>(..)`` into
``void at::native::`` and merges unrelated kernels.

:func:`base_name` reduces a mangled or demangled name to the function's own identifier, so that a
profile (demangled names) and a simulator trace (mangled names) of the same run can be matched.
"""

from __future__ import annotations

from functools import lru_cache

_OPEN = "([<{"
_CLOSE = ")]>}"


def strip_args(name: str) -> str:
    """Remove the trailing balanced ``(...)`` argument list (and cv/ref qualifiers after it).

    ``"void foo<int>(float*, int)"`` → ``"void foo<int>"``;
    ``"ns::(anonymous namespace)::k(int)"`` → ``"ns::(anonymous namespace)::k"``;
    a name without a trailing group is returned stripped of surrounding blanks.
    """
    s = name.rstrip()
    # cv / ref qualifiers of member functions: "f(int) const", "f() &&" (stripped in a loop, not by
    # a regular expression anchored at the end, which backtracked quadratically over long blanks)
    while True:
        for q in ("const", "volatile", "&&", "&"):
            if s.endswith(q):
                s = s[: -len(q)].rstrip()
                break
        else:
            break
    if not s.endswith(")"):
        return name.strip()
    depth = 0
    for i in range(len(s) - 1, -1, -1):
        c = s[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                head = s[:i].rstrip()
                return head if head else name.strip()
    return name.strip()


def _parse_source_name(s: str, i: int) -> tuple[str, int] | None:
    j = i
    while j < len(s) and s[j].isdigit():
        j += 1
    if j == i:
        return None
    n = int(s[i:j])
    if n <= 0 or j + n > len(s):
        return None
    return s[j : j + n], j + n


def _mangled_identifier(name: str) -> str | None:
    """The unqualified function identifier of an Itanium-mangled name, or None."""
    if not name.startswith("_Z"):
        return None
    i = 2
    if i < len(name) and name[i] == "L":  # internal linkage
        i += 1
    if i < len(name) and name[i] == "N":
        i += 1
        while i < len(name) and name[i] in "rVKRO":
            i += 1
        last = None
        while i < len(name):
            if name[i] == "E" or name[i] == "I":
                break
            if name[i] == "S":  # substitution: skip S<seq>_ or St
                k = name.find("_", i)
                if name.startswith("St", i):
                    i += 2
                    continue
                if k < 0:
                    return last
                i = k + 1
                continue
            parsed = _parse_source_name(name, i)
            if parsed is None:
                break
            last, i = parsed
        return last
    parsed = _parse_source_name(name, i)
    return parsed[0] if parsed else None


@lru_cache(maxsize=65536)
def base_name(name: str) -> str:
    """The kernel's own identifier, from a mangled or a demangled name.

    ``"_Z12sgemm_kernelPKfS0_Pfiii"`` and ``"sgemm_kernel(float const*, float const*, float*,
    int, int, int)"`` both give ``"sgemm_kernel"``; ``"void at::native::(anonymous
    namespace)::foo<float>(float*)"`` gives ``"foo"``.
    """
    ident = _mangled_identifier(name.strip())
    if ident:
        return ident
    s = strip_args(name)
    # drop template arguments, innermost last
    out = []
    depth = 0
    for c in s:
        if c == "<":
            depth += 1
        elif c == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(c)
    s = "".join(out).strip()
    # the last component after "::" and after a return type separated by a blank
    s = s.split("::")[-1].strip()
    s = s.split()[-1] if s.split() else s
    return s or name.strip()
