"""What a course's engine is asked in its own words: adapters, contracts, conventions, spellings
and snippets (``grader/language/``)."""
