"""Values a user gave, checked before they are written into a generated shell script or batch file.

``accelsim select`` writes a bash script, HyFiSS's ``apply`` a run script, the SLURM executor a
batch script; each embeds paths and commands the user typed. Quoting (``shlex.quote``, one
single-quoted word) makes any value safe as a word of a command, but not in every place of a
script: inside double quotes ``$(...)`` and backquotes still run, and a ``#`` comment or an
``#SBATCH`` directive ends at the first newline, so a value holding one starts a line of its own
that runs as a command. Generated scripts therefore keep values out of double quotes and out of
comments where they can, and refuse control characters (newline, carriage return, tab, escape and
the rest of C0 and C1, DEL) in every value they embed: no file name a user means holds one, and a
one-line refusal is clearer than a script that runs something else.
"""

from __future__ import annotations

import re

from simsample.errors import UserError

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def refuse_control(value: str, what: str, *, hint: str = "give a value without control characters") -> str:
    """``value`` unchanged, or a one-line :class:`UserError` when it holds a control character (it
    would end a comment or a directive line of the script) or cannot be written as UTF-8."""
    text = str(value)
    m = _CONTROL.search(text)
    if m is not None:
        raise UserError(
            f"{what} {text[:60]!r}: holds the control character {m.group(0)!r}, which would end a line of the "
            f"generated script; {hint}"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UserError(
            f"{what} {text[:60]!r}: not valid UTF-8 (bytes the script cannot hold as text); rename it"
        ) from None
    return text


def comment_text(value: str) -> str:
    """``value`` made safe for a ``#`` comment line: control characters shown as escapes, so nothing
    in it can end the comment."""
    return (
        _CONTROL.sub(lambda m: repr(m.group(0))[1:-1], str(value)).encode("utf-8", "backslashreplace").decode("utf-8")
    )
