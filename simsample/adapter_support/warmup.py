"""What the adapters' ``--warmup`` options share: reading the choice the user typed."""

from __future__ import annotations

from collections.abc import Sequence

from simsample.errors import UserError


def warmup_choice(text: str | int, words: Sequence[str]) -> int | str:
    """``--warmup`` as given: a number of launches K >= 0 (``none`` is 0), or one of ``words``
    (lower-cased), each adapter naming the choices it has; anything else is one line that
    lists them."""
    t = str(text).strip().lower()
    if t in words:
        return t
    if t == "none":
        return 0
    try:
        k = int(t)
    except ValueError:
        named = ", ".join(f"'{w}'" for w in ("none", *words))
        raise UserError(f"--warmup {text!r}: expected a number of launches K >= 0, {named}") from None
    if k < 0:
        raise UserError(f"--warmup {k}: K must be >= 0 (the number of launches run before each sampled launch)")
    return k
