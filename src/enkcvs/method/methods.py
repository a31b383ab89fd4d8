"""The methods a run trains final models with, by name, and their groups: which need a selection (E-NKCVS's or
their own), which are ensembles, which climb the ablation ladder, which use the true labels, gamma or mixup. Names
only, so that the workflow's planning and the report read them without the training package
(:mod:`enkcvs.training.final` says how each trains).
"""

#: Final-training methods. ``ce``: every sample with its given label. ``ce_mixup``: the same with the recipe's mixup
#: (not in the paper: what mixup alone buys before any selection). ``ce_true``: every sample with its *true* label (the
#: clean ceiling of the ablation ladder; needs injected noise). ``sl`` / ``gce``: the given labels under the symmetric
#: (Wang et al. 2019) or generalized (Zhang & Sabuncu 2018) cross-entropy; ``sl_mixup`` SL with the recipe's mixup, as
#: E-NKCVS's final model mixes (not in the paper). ``coteaching``: the given labels, two networks exchanging
#: small-loss samples (Han et al. 2018). ``ss_only``: the selected set SS alone, no re-weighting (Figure 1, Table 1).
#: ``cl_prune``: the samples confident learning does not flag (cleanlab's ``find_label_issues`` on the same
#: out-of-fold probabilities), trained as ``ss_only`` (Northcutt et al.'s prune-and-retrain; not in the paper).
#: ``ss_pseudo``: SS with its given labels plus every other sample with its pseudo label, all weighted alike (plain
#: CE: no beta, no gamma). ``ss_pseudo_weighted``: the same hard pseudo labels under Eq. full-loss's per-set
#: normalisation and gamma (beta = 0). ``enkcvs``: SS plus the re-weighted non-selected samples (Eq. full-loss). Two
#: oracle rungs use the true labels to locate losses (injected noise only): ``cs_only`` trains on the clean samples CS
#: (a perfect selection), ``css_only`` on the clean selected ones CSS (SS minus its wrong labels). Two baselines matched
#: on what E-NKCVS gets (not in the paper): ``incv``, the samples Chen et al.'s (2019) Iterative Noisy Cross-Validation
#: selects, trained as ``ss_only``; ``ce_mixup_ensemble``, ``ce_mixup`` models at E-NKCVS's training budget, their
#: test probabilities averaged (:mod:`enkcvs.method.incv`, :mod:`enkcvs.method.ensemble`).
METHODS = (
    "ce",
    "ce_mixup",
    "ce_mixup_ensemble",
    "ce_true",
    "sl",
    "sl_mixup",
    "gce",
    "coteaching",
    "cs_only",
    "ss_only",
    "css_only",
    "cl_prune",
    "incv",
    "ss_pseudo",
    "ss_pseudo_weighted",
    "enkcvs",
)
#: Methods without a selection (docs/paper-notes.md, "The baselines"): they train on every sample with a one-hot label.
BASELINE_METHODS = ("ce", "ce_mixup", "ce_true", "sl", "sl_mixup", "gce", "coteaching", "cs_only")
#: Methods that need a selection (K, M, t) before training (``cl_prune``: confident learning's, on the same folds).
SELECTION_METHODS = ("ss_only", "css_only", "cl_prune", "ss_pseudo", "ss_pseudo_weighted", "enkcvs")
#: Methods that select by a procedure of their own, with no (K, M, t): INCV (Chen et al. 2019).
OWN_SELECTION_METHODS = ("incv",)
#: Methods of several final models whose number follows E-NKCVS's training budget at its (K, M).
ENSEMBLE_METHODS = ("ce_mixup_ensemble",)
#: Methods that are another method with the recipe's mixup: on a recipe without mixup they would train that method
#: again, so no run trains them there.
MIXUP_VARIANTS = {"ce_mixup": "ce", "sl_mixup": "sl"}
#: The ablation ladder (``results/report/ablation.*``), all with the same recipe, seeds and selection, one change per
#: rung: the clean ceiling, CE on the noisy labels, CE with mixup, then the selection with and without its wrong
#: labels and a perfect selection (the oracles show what the selection's precision and recall cost), then the
#: ingredients of E-NKCVS one by one: the pseudo-labelled rest, Eq. full-loss's normalisation and gamma, beta.
ABLATION_LADDER = (
    "ce_true",
    "ce",
    "ce_mixup",
    "cs_only",
    "css_only",
    "ss_only",
    "ss_pseudo",
    "ss_pseudo_weighted",
    "enkcvs",
)
#: Methods that train on the true labels (the ceiling and the oracles): injected noise only.
ORACLE_METHODS = ("ce_true", "cs_only", "css_only")
#: Methods whose final loss weighs the non-selected samples by gamma (Eq. full-loss).
GAMMA_METHODS = ("ss_pseudo_weighted", "enkcvs")
#: Methods that train with the recipe's mixup: mixup is part of E-NKCVS (Section 3.1), so its final model and the
#: ladder's selection rungs mix; ``ce_mixup`` shows mixup alone, and the baselines matched on E-NKCVS's final model
#: (``sl_mixup``, ``incv``, the ensemble's members) mix as it does. The paper's baselines train as their authors do,
#: without it (docs/paper-notes.md, "The baselines"); ``ce``, ``sl`` and ``gce`` may opt in (option ``mixup``), co-teaching may not.
MIXUP_METHODS = (
    "ce_mixup",
    "ce_mixup_ensemble",
    "sl_mixup",
    "cs_only",
    "css_only",
    "ss_only",
    "cl_prune",
    "incv",
    "ss_pseudo",
    "ss_pseudo_weighted",
    "enkcvs",
)
