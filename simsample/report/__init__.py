"""``simsample report``: one self-contained HTML page for a plan, its estimate and evaluations.

The page has inline CSS and inline SVG figures (drawn by matplotlib) and no scripts, so it opens
offline in any browser and prints. :mod:`simsample.report.command` is the CLI command;
:mod:`~simsample.report.content` gathers what the page shows; :mod:`~simsample.report.plots`
draws the figures; :mod:`~simsample.report.render` fills the jinja2 template shipped in
``templates/``.
"""
