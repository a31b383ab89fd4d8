"""Continuing runs: an unfinished run saved with its finished jobs and epoch checkpoints and restored on another
machine (:mod:`.carry`), and a run stopped at a time limit to go on later (:mod:`.deadline`)."""
