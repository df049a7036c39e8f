"""Each report format a grade is shown in: terminal, HTML, summary page, JSON and the others
(``grader/report/``)."""
