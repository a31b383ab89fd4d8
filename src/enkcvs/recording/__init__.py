"""Recording runs: a finished run's report kept with its provenance (:mod:`.record`), read back
(:mod:`.provenance`), the workflow run and timed to be recorded (:mod:`.run`), two runs compared (:mod:`.compare`)."""
