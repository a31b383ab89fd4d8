"""Recorded runs: a finished run's report kept with its provenance (:mod:`.recorded`;
``python -m enkcvs.runs.recorded``), an unfinished one carried between machines (:mod:`.carry`), the views computed from
the records (:mod:`.views`) and the pages' generated blocks (:mod:`.pages`)."""
