"""mkdocs hooks of the documentation site (``hooks:`` in mkdocs.yml).

Docstrings cross-reference in Sphinx's style (:meth:`to_parquet`, :class:`~simsample.errors.UserError`),
which mkdocstrings renders as the raw marker before a code span. The markers become plain code
spans with the name a reader would type (``~`` keeps the last part, as in Sphinx).
"""

from __future__ import annotations

import re

_ROLE = re.compile(r":(?:py:)?(?:meth|func|class|attr|mod|data|exc|obj|const):<code>(~?)([^<]+)</code>")


def _name(match: re.Match[str]) -> str:
    tilde, target = match.group(1), match.group(2)
    shown = target.rsplit(".", 1)[-1] if tilde else target
    return f"<code>{shown}</code>"


def sphinx_roles_to_code(html: str) -> str:
    """``:meth:<code>x</code>`` (a Sphinx role as mkdocstrings renders it) -> ``<code>x</code>``."""
    return _ROLE.sub(_name, html)


def on_page_content(html: str, **kwargs) -> str:
    return sphinx_roles_to_code(html)
