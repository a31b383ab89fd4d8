"""E-NKCVS: Ensemble Noise-robust K-fold Cross-Validation Selection for noisy labels (IJCAI-21).

Importing the package is cheap and needs no third-party package: modules that need torch (``models``, ``mixup``,
``train``, ``steps.train_*``) import it themselves, so selection, voting, metrics, theory and reporting run without it.
``enkcvs.select`` applies E-NKCVS to out-of-fold probabilities a user already has (:mod:`enkcvs.oof`).
"""

__all__ = ["select"]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name == "select":  # imported on first use, so `import enkcvs` stays free of numpy and pandas
        from enkcvs.oof import select

        return select
    raise AttributeError(f"module 'enkcvs' has no attribute {name!r}")
