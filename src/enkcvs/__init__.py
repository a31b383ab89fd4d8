"""E-NKCVS: Ensemble Noise-robust K-fold Cross-Validation Selection for noisy labels (IJCAI-21).

Importing the package is cheap: modules that need torch (``models``, ``mixup``, ``train``, ``steps.train_*``)
import it themselves, so selection, voting, metrics, theory and reporting run without it.
``enkcvs.select`` applies E-NKCVS to out-of-fold probabilities a user already has (:mod:`enkcvs.oof`).
"""

from enkcvs.oof import select

__all__ = ["select"]
__version__ = "0.1.0"
