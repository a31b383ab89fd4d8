"""Training: the one loop (:mod:`.train`) shared by fold models, final models and the baselines, with what it is made
of (recipe, models, optimizer, batches, precision, epoch checkpoints and state, evaluation, devices), the
final-training methods of Table 2 (:mod:`.final`), the cross-validation's out-of-fold probabilities (:mod:`.crossval`)
and a prepared dataset's model inputs (:mod:`.inputs`).

torch is imported at module level by the engine's modules only; :mod:`.recipe`, :mod:`.final`, :mod:`.resume`,
:mod:`.crossval` and :mod:`.inputs` stay free of it, so the workflow can plan jobs and the carry can find checkpoints
without paying its import.
"""
