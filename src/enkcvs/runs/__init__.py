"""The command line of recorded runs (:mod:`.cli`; ``python -m enkcvs.runs``): run the workflow and record it,
regenerate the pages, compare two runs."""
