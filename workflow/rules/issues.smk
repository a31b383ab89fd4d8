# Report rules: on a cluster they run in the Snakemake process, not through the queue.
localrules:
    label_issue_grid,


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
