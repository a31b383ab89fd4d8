"""Where the workflow writes the files the library reads back from a working directory (the audit, the SL grid):
the output paths of ``workflow/rules/*.smk``, as ``str.format`` patterns. ``tests/test_layout.py`` keeps each equal to
a rule's output."""

DATASET = "results/data/{dataset}.npz"
TOKENS = "results/tokens/{dataset}/{tokenizer}.npz"
NOISE_LABELS = "results/noise/{dataset}/{noise}/seed{seed}.parquet"
FOLD = "results/folds/{dataset}/{noise}/seed{seed}/K{K}/m{m}/k{k}.parquet"
SELECTION = "results/selection/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/selection.parquet"
SELECTION_METRICS = "results/selection/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/metrics.json"
#: The kept set prune-and-retrain trains from (every other selection method trains from :data:`SELECTION`).
CL_SELECTION = "results/comparison/{dataset}/{noise}/seed{seed}/K{K}/M{M}/cl_selection.parquet"
FINAL_BASELINE = "results/final/{dataset}/{noise}/seed{seed}/{baseline}.json"
FINAL_SELECTED = "results/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/{method}.json"
#: Prune-and-retrain's model: its kept set does not depend on t, so neither does its path.
FINAL_PRUNED = "results/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/cl_prune.json"
#: INCV's selection (Chen et al. 2019), which has no (K, M, t), and its final model.
INCV_SELECTION = "results/selection/{dataset}/{noise}/seed{seed}/incv/selection.parquet"
FINAL_INCV = "results/final/{dataset}/{noise}/seed{seed}/incv.json"
#: A member of CE + mixup's ensemble (its test probabilities), the same for every (K, M), and the ensemble at the
#: budget of E-NKCVS's (K, M).
ENSEMBLE_MEMBER = "results/final/{dataset}/{noise}/seed{seed}/ce_mixup_ensemble/member{member}.parquet"
FINAL_ENSEMBLE = "results/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/ce_mixup_ensemble.json"
