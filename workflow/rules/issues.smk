# Report rules: on a cluster they run in the Snakemake process, not through the queue.
localrules:
    review_images,
    review_group_images,
    review_markdown,


# One seed's ranking and the merged one: the same step (one seed is a merge of one), each from the fold predictions.
rule label_issues:
    input:
        unpack(get_issue_inputs),
    output:
        table="results/issues/{dataset}/{noise}/seed{seed}/label_issues.parquet",
        summary="results/issues/{dataset}/{noise}/seed{seed}/summary.md",
    log:
        "logs/issues/{dataset}/{noise}/seed{seed}.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        threshold=get_issue_threshold,
        top=config["report"]["top_issues"],
        code=code_of("label_issues"),
    script:
        "../scripts/label_issues.py"


rule merged_label_issues:
    input:
        unpack(get_issue_inputs),
    output:
        table="results/issues/{dataset}/{noise}/label_issues.parquet",
        summary=report(
            "results/issues/{dataset}/{noise}/summary.md",
            caption="../report/issues.rst",
            category="Supplement - Label issues",
            subcategory="{dataset} ({noise})",
        ),
    log:
        "logs/issues/{dataset}/{noise}.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        threshold=get_issue_threshold,
        top=config["report"]["top_issues"],
        code=code_of("label_issues"),
    script:
        "../scripts/label_issues.py"


rule compare_real_label_issues:
    input:
        unpack(get_issue_inputs),
    output:
        markdown="results/issues/{dataset}/{noise}/confident_learning.md",
        csv="results/issues/{dataset}/{noise}/confident_learning.csv",
    log:
        "logs/issues/{dataset}/{noise}.confident_learning.log",
    conda:
        "../../envs/compare.yaml"
    params:
        threshold=get_issue_threshold,
        code=code_of("compare_real_label_issues"),
    script:
        "../scripts/compare_real_label_issues.py"


rule review_images:
    input:
        dataset=rules.prepare_dataset.output.dataset,
        table=rules.merged_label_issues.output.table,
    output:
        png=report(
            "results/issues/{dataset}/{noise}/review.png",
            caption="../report/review.rst",
            category="Supplement - Label issues",
            subcategory="{dataset} ({noise})",
        ),
        pdf="results/issues/{dataset}/{noise}/review.pdf",
    log:
        "logs/issues/{dataset}/{noise}.review_images.log",
    conda:
        "../../envs/report.yaml"
    params:
        top=config["report"]["review_top"],
        dpi=config["report"]["dpi"],
        code=code_of("review_sheet"),
    script:
        "../scripts/review_sheet.py"


rule review_group_images:
    input:
        dataset=rules.prepare_dataset.output.dataset,
        table=rules.merged_label_issues.output.table,
    output:
        png=report(
            "results/issues/{dataset}/{noise}/review-{group}.png",
            caption="../report/review.rst",
            category="Supplement - Label issues",
            subcategory="{dataset} ({noise})",
        ),
        pdf="results/issues/{dataset}/{noise}/review-{group}.pdf",
    log:
        "logs/issues/{dataset}/{noise}.review_images-{group}.log",
    conda:
        "../../envs/report.yaml"
    params:
        top=config["report"]["review_top"],
        dpi=config["report"]["dpi"],
        group=lambda wildcards: wildcards.group,
        code=code_of("review_sheet"),
    script:
        "../scripts/review_sheet.py"


rule review_markdown:
    input:
        dataset=rules.prepare_dataset.output.dataset,
        table=rules.merged_label_issues.output.table,
    output:
        markdown=report(
            "results/issues/{dataset}/{noise}/review.md",
            caption="../report/review.rst",
            category="Supplement - Label issues",
            subcategory="{dataset} ({noise})",
        ),
    log:
        "logs/issues/{dataset}/{noise}.review_markdown.log",
    conda:
        "../../envs/report.yaml"
    params:
        top=config["report"]["review_top"],
        code=code_of("review_sheet"),
    script:
        "../scripts/review_sheet.py"


rule select_out_of_fold:
    input:
        unpack(get_oof_inputs),
    output:
        table="results/oof/{name}/label_issues.parquet",
        metrics="results/oof/{name}/metrics.json",
    log:
        "logs/oof/{name}.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        settings=get_oof_settings,
        code=code_of("select_out_of_fold"),
    script:
        "../scripts/select_out_of_fold.py"
