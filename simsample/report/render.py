"""Filling the page template: jinja2 with autoescaping, the stylesheet inlined."""

from __future__ import annotations

from importlib import resources

import jinja2

from simsample.report.content import Report


def _templates():
    return resources.files("simsample.report").joinpath("templates")


def render(report: Report) -> str:
    """The whole page as one HTML string (figures are inline SVG, the CSS is inline)."""
    folder = _templates()
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: folder.joinpath(name).read_text(encoding="utf-8")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    css = folder.joinpath("report.css").read_text(encoding="utf-8")
    return env.get_template("report.html.j2").render(r=report, css=css)
