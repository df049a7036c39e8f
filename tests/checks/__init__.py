"""The checks that judge a worker's answers, most of them against a fake worker in-process
(``grader/checks/``)."""
