"""How the report titles the final-training methods (:mod:`enkcvs.training.final`) and the rungs of the ablation
ladder: the paper's names where it prints a method (:data:`enkcvs.report.paper.METHOD_NAMES`), else a short
description."""

from enkcvs.method.methods import ABLATION_LADDER, METHODS
from enkcvs.report.paper import METHOD_NAMES

#: How tables and figures title each method: the paper's names where it prints the method, else a short description
#: that says when the paper has no such row.
METHOD_TITLES = {
    **{method: METHOD_NAMES[method] for method in METHODS if method in METHOD_NAMES},
    "ce_mixup": "CE + mixup (not in the paper)",
    "ce_mixup_ensemble": "CE + mixup ensemble, E-NKCVS's budget (not in the paper)",
    "sl_mixup": "SL + mixup (not in the paper)",
    "incv": "INCV selection (not in the paper)",
    "ce_true": "CE, true labels",
    "gce": "GCE (not in the paper)",
    "cs_only": "CS only (oracle)",
    "ss_only": "SS only",
    "css_only": "CSS only (oracle)",
    "cl_prune": "CL prune + retrain (not in the paper)",
    "ss_pseudo": "SS + pseudo rest",
    "ss_pseudo_weighted": "SS + pseudo rest, full loss (beta = 0)",
}
#: How the ablation ladder's table heads its rungs: the methods' titles, with what tells the ladder's two ends apart.
RUNG_COLUMNS = {
    **{method: METHOD_TITLES[method] for method in ABLATION_LADDER},
    "ce": "CE, noisy labels",
    "ce_mixup": "CE + mixup, noisy labels",
    "enkcvs": "E-NKCVS (beta, gamma)",
}
