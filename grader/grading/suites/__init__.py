"""The grading tests the plugin runs against a submission. They ship with the student release
(except tests of hidden items); the project's own tests live in tests/ and never ship."""
