"""The Jinja2 environment every HTML page is rendered in (``grader/report/templates``).

Autoescape is on: every value a page shows is escaped, so a student id, a function name or an
exception message a submission chose cannot add markup to the page. What is markup already (a
Graphviz SVG the grader drew) is marked so in the code that hands it over, nowhere else.
"""

from __future__ import annotations

from jinja2 import Environment, PackageLoader, StrictUndefined

ENVIRONMENT = Environment(
    loader=PackageLoader("grader.report", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
