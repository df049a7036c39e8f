"""JUnit XML: one test case per rubric item, so any CI shows the items as tests.

Passed items are passing cases; failed, partial and missing ones carry a ``<failure>``,
errors and timeouts an ``<error>``. Points are properties of each case. Characters XML 1.0
cannot carry (a submission's control characters) are replaced.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from grader.report.document import GradeReport
from grader.report.view import points

NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
ERRORS = ("error", "timeout")


def _text(value: str) -> str:
    return NOT_XML.sub("\ufffd", value)


def junit_xml(report: GradeReport) -> str:
    """The report as a ``<testsuites>`` document with one suite per assignment."""
    root = ET.Element("testsuites", name="autograder", tests=str(len(report.items)))
    for view in report.views:
        mine = view.items
        suite = ET.SubElement(
            root,
            "testsuite",
            name=view.assignment,
            tests=str(len(mine)),
            failures=str(sum(i.status not in ("passed", *ERRORS) for i in mine)),
            errors=str(sum(i.status in ERRORS for i in mine)),
        )
        for item in mine:
            case = ET.SubElement(suite, "testcase", classname=view.assignment, name=item.id)
            properties = ET.SubElement(case, "properties")
            for name, value in (
                ("score", item.score),
                ("max_score", item.max_score),
                ("status", item.status),
            ):
                ET.SubElement(properties, "property", name=name, value=str(value))
            if item.status == "passed":
                continue
            tag = "error" if item.status in ERRORS else "failure"
            problem = ET.SubElement(
                case,
                tag,
                type=item.status,
                message=_text(f"{points(item.score)}/{points(item.max_score)}: {item.reason}"),
            )
            problem.text = _text(item.feedback)
    root.set("failures", str(sum(int(s.get("failures", 0)) for s in root)))
    root.set("errors", str(sum(int(s.get("errors", 0)) for s in root)))
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
