# Report rules: on a cluster they run in the Snakemake process, not through the queue.
localrules:
    confident_learning_report, ranking_report, label_issue_grid,


rule label_issues:
    input:
        dataset=rules.prepare_dataset.output.dataset,
        selection=get_issue_selection,
    output:
        table="results/issues/{dataset}/{noise}/seed{seed}/label_issues.parquet",
        summary="results/issues/{dataset}/{noise}/seed{seed}/summary.md",
    log:
        "logs/issues/{dataset}/{noise}/seed{seed}.log",
    params:
        top=config["report"]["top_issues"],
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/label_issues.py"


rule merged_label_issues:
    input:
        unpack(get_merged_issue_inputs),
    output:
        table="results/issues/{dataset}/{noise}/label_issues.parquet",
        summary=report(
            "results/issues/{dataset}/{noise}/summary.md", caption="../report/issues.rst", category="Label issues"
        ),
    log:
        "logs/issues/{dataset}/{noise}.log",
    params:
        threshold=get_issue_threshold,
        top=config["report"]["top_issues"],
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/merged_label_issues.py"


rule label_issue_grid:
    input:
        dataset=rules.prepare_dataset.output.dataset,
        table=rules.merged_label_issues.output.table,
    output:
        png=report(
            "results/issues/{dataset}/{noise}/examples.png", caption="../report/issue_grid.rst", category="Label issues"
        ),
    log:
        "logs/issues/{dataset}/{noise}.grid.log",
    params:
        top=config["report"]["top_issues"],
        dpi=config["report"]["dpi"],
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/label_issue_grid.py"


rule select_out_of_fold:
    input:
        unpack(get_oof_inputs),
    output:
        table="results/oof/{name}/label_issues.parquet",
        metrics="results/oof/{name}/metrics.json",
    log:
        "logs/oof/{name}.log",
    params:
        settings=get_oof_settings,
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/select_out_of_fold.py"


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
    script:
        "../scripts/compare_confident_learning.py"


rule confident_learning_selection:
    input:
        predictions=get_fold_predictions,
        labels=rules.inject_noise.output.labels,
    output:
        selection="results/comparison/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/cl_selection.parquet",
    log:
        "logs/comparison/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/cl_selection.log",
    conda:
        "../../envs/compare.yaml"
    script:
        "../scripts/confident_learning_selection.py"


rule confident_learning_report:
    input:
        tables=get_comparison_tables,
    output:
        markdown="results/report/confident_learning.md",
        csv=report(
            "results/report/confident_learning.csv", caption="../report/confident_learning.rst", category="Tables"
        ),
        latex="results/report/confident_learning.tex",
        png=report(
            "results/report/confident_learning.png", caption="../report/confident_learning.rst", category="Figures"
        ),
        pdf="results/report/confident_learning.pdf",
    log:
        "logs/report/confident_learning.log",
    params:
        decimals=config["report"]["decimals"],
        dpi=config["report"]["dpi"],
    conda:
        "../../envs/compare.yaml"
    script:
        "../scripts/confident_learning_report.py"


rule ranking_report:
    input:
        tables=get_ranking_tables,
    output:
        markdown="results/report/ranking.md",
        csv=report("results/report/ranking.csv", caption="../report/ranking.rst", category="Tables"),
        latex="results/report/ranking.tex",
    log:
        "logs/report/ranking.log",
    params:
        decimals=config["report"]["decimals"],
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/ranking_report.py"
