"""E-NKCVS: Ensemble Noise-robust K-fold Cross-Validation Selection for noisy labels (IJCAI-21).

The package in layers, each importing only from the layers listed above it (``tests/test_package_structure.py`` keeps
it so):

1. the basics, at the top level: :mod:`enkcvs.io` (self-describing files), :mod:`enkcvs.rng` (seeds),
   :mod:`enkcvs.ids` (sample ids), :mod:`enkcvs.machine` (the CPU a run belongs to);
2. :mod:`enkcvs.method`: the paper's method, one function per equation (noise, folds, mixup, selection, weights,
   losses, metrics, theory, ranking);
3. :mod:`enkcvs.data`: the prepared datasets, where they come from, texts tokenised;
4. :mod:`enkcvs.training`: the one training loop and what it is made of, the final-training methods, the
   cross-validation's out-of-fold probabilities;
5. :mod:`enkcvs.labelissues`: label issues in a user's own data, and the ``enkcvs find-issues`` command;
6. :mod:`enkcvs.pipeline`: what the Snakemake workflow's rules call: its steps, config checks and file layout;
7. :mod:`enkcvs.recording`: a finished run recorded with its provenance, read back, two runs compared;
8. :mod:`enkcvs.report`: tables and figures from the workflow's results beside the paper's published numbers, the
   paper's claims against the recorded runs, and the pages rendered from templates;
9. :mod:`enkcvs.runs`: the command line of recorded runs (``python -m enkcvs.runs``).

Importing the package is cheap and needs no third-party package: the modules that need torch (the training engine,
:mod:`enkcvs.method.mixup`, :mod:`enkcvs.method.losses`) import it themselves, and the training steps import them
inside the step, so selection, voting, metrics, theory and reporting run without it. ``enkcvs.select`` applies
E-NKCVS to out-of-fold probabilities a user already has (:mod:`enkcvs.labelissues.oof`), ``enkcvs.find_issues``
trains a scikit-learn-compatible classifier of the user's as the fold models (:mod:`enkcvs.labelissues.find`).
"""

__all__ = ["find_issues", "select"]
__version__ = "0.2.0"


def __getattr__(name: str):
    if name == "select":  # imported on first use, so `import enkcvs` stays free of numpy and pandas
        from enkcvs.labelissues.oof import select

        return select
    if name == "find_issues":
        from enkcvs.labelissues.find import find_issues

        return find_issues
    raise AttributeError(f"module 'enkcvs' has no attribute {name!r}")
