# Confident learning (cleanlab) on the same out-of-fold probabilities as E-NKCVS: the comparison of every main
# selection with known true labels and the two report tables (and figure) gathered from them, and the kept set that
# prune-and-retrain (method cl_prune) trains its final model on.


# The report rules: on a cluster they run in the Snakemake process, not through the queue.
localrules:
    confident_learning_report,
    ranking_report,


rule compare_confident_learning:
    input:
        predictions=get_fold_predictions,
        labels=rules.inject_noise.output.labels,
    output:
        table="results/comparison/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/confident_learning.parquet",
        ranking="results/comparison/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/ranking.parquet",
    log:
        "logs/comparison/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}.log",
    conda:
        "../../envs/compare.yaml"
    resources:
        mem_mb=4000,
    params:
        code=code_of("compare_confident_learning"),
    script:
        "../scripts/compare_confident_learning.py"


rule confident_learning_selection:
    input:
        predictions=get_fold_predictions,
        labels=rules.inject_noise.output.labels,
    output:
        selection="results/comparison/{dataset}/{noise}/seed{seed}/K{K}/M{M}/cl_selection.parquet",
    log:
        "logs/comparison/{dataset}/{noise}/seed{seed}/K{K}/M{M}/cl_selection.log",
    conda:
        "../../envs/compare.yaml"
    params:
        code=code_of("confident_learning_selection"),
    script:
        "../scripts/confident_learning_selection.py"


rule confident_learning_report:
    input:
        # every main setting with known true labels
        tables=lambda wildcards: selection_outputs(
            rules.compare_confident_learning.output.table, PLAN.main_settings(real=False), PLAN.main_point
        ),
    output:
        markdown="results/report/confident_learning.md",
        csv=report(
            "results/report/confident_learning.csv",
            caption="../report/confident_learning.rst",
            category="Supplement - Confident learning",
        ),
        latex="results/report/confident_learning.tex",
        png=report(
            "results/report/confident_learning.png",
            caption="../report/confident_learning.rst",
            category="Supplement - Confident learning",
        ),
        pdf="results/report/confident_learning.pdf",
    log:
        "logs/report/confident_learning.log",
    conda:
        "../../envs/compare.yaml"
    params:
        decimals=config["report"]["decimals"],
        dpi=config["report"]["dpi"],
        code=code_of("confident_learning_report"),
    script:
        "../scripts/confident_learning_report.py"


rule ranking_report:
    input:
        # every main setting with known true labels
        tables=lambda wildcards: selection_outputs(
            rules.compare_confident_learning.output.ranking, PLAN.main_settings(real=False), PLAN.main_point
        ),
    output:
        markdown="results/report/ranking.md",
        csv=report(
            "results/report/ranking.csv", caption="../report/ranking.rst", category="Supplement - Confident learning"
        ),
        latex="results/report/ranking.tex",
    log:
        "logs/report/ranking.log",
    conda:
        "../../envs/report.yaml"
    params:
        decimals=config["report"]["decimals"],
        code=code_of("ranking_report"),
    script:
        "../scripts/ranking_report.py"
