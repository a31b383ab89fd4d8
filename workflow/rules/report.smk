# Seconds of pandas and matplotlib each: on a cluster they run in the Snakemake process, not through the queue.
localrules:
    table1,
    table2,
    table3,
    matched,
    ablation,
    dataset_summary,
    noise_table,
    sensitivity_figure,
    theory_figure,
    test_curves,
    resource_usage,


rule table1:
    input:
        metrics=get_table1_metrics,
    output:
        markdown="results/report/table1.md",
        csv=report("results/report/table1.csv", caption="../report/table1.rst", category="Paper - Table 1 (selection)"),
        latex="results/report/table1.tex",
    log:
        "logs/report/table1.log",
    conda:
        "../../envs/report.yaml"
    params:
        decimals=config["report"]["decimals"],
        paper_names=get_paper_names,
        code=code_of("table1"),
    script:
        "../scripts/table1.py"


rule table2:
    input:
        results=get_table2_results,
    output:
        markdown="results/report/table2.md",
        csv=report(
            "results/report/table2.csv", caption="../report/table2.rst", category="Paper - Table 2 (test accuracy)"
        ),
        latex="results/report/table2.tex",
    log:
        "logs/report/table2.log",
    conda:
        "../../envs/report.yaml"
    params:
        decimals=config["report"]["decimals"],
        methods=config["methods"],
        paper_names=get_paper_names,
        code=code_of("table2"),
    script:
        "../scripts/table2.py"


# E-NKCVS minus every other method, paired by seed, from Table 2's final models.
rule matched:
    input:
        results=get_table2_results,
    output:
        markdown="results/report/matched.md",
        csv=report(
            "results/report/matched.csv",
            caption="../report/matched.rst",
            category="Supplement - E-NKCVS against matched baselines",
        ),
        latex="results/report/matched.tex",
    log:
        "logs/report/matched.log",
    conda:
        "../../envs/report.yaml"
    params:
        decimals=config["report"]["decimals"],
        methods=config["methods"],
        code=code_of("matched"),
    script:
        "../scripts/matched.py"


rule ablation:
    input:
        results=get_ablation_results,
        metrics=get_table1_metrics,
    output:
        markdown="results/report/ablation.md",
        csv=report("results/report/ablation.csv", caption="../report/ablation.rst", category="Supplement - Ablation"),
        latex="results/report/ablation.tex",
    log:
        "logs/report/ablation.log",
    conda:
        "../../envs/report.yaml"
    params:
        decimals=config["report"]["decimals"],
        rungs=list(ABLATION_LADDER),
        code=code_of("ablation"),
    script:
        "../scripts/ablation.py"


rule table3:
    input:
        results=get_table3_results,
    output:
        markdown="results/report/table3.md",
        csv=report(
            "results/report/table3.csv", caption="../report/table3.rst", category="Paper - Table 3 (real-world data)"
        ),
        latex="results/report/table3.tex",
    log:
        "logs/report/table3.log",
    conda:
        "../../envs/report.yaml"
    params:
        decimals=config["report"]["decimals"],
        methods=config["methods"],
        paper_names=get_paper_names,
        code=code_of("table3"),
    script:
        "../scripts/table3.py"


rule dataset_summary:
    input:
        datasets=get_prepared_datasets,
    output:
        markdown="results/report/datasets.md",
        csv=report(
            "results/report/datasets.csv", caption="../report/datasets.rst", category="Supplement - Datasets and noise"
        ),
        latex="results/report/datasets.tex",
    log:
        "logs/report/datasets.log",
    conda:
        "../../envs/report.yaml"
    params:
        names=sorted(DATASETS),
        code=code_of("dataset_summary"),
    script:
        "../scripts/dataset_summary.py"


rule noise_table:
    input:
        labels=get_noise_labels,
    output:
        markdown="results/report/noise.md",
        csv=report(
            "results/report/noise.csv", caption="../report/noise.rst", category="Supplement - Datasets and noise"
        ),
        latex="results/report/noise.tex",
    log:
        "logs/report/noise.log",
    conda:
        "../../envs/report.yaml"
    params:
        datasets=get_noise_label_datasets,
        decimals=config["report"]["decimals"],
        code=code_of("noise_table"),
    script:
        "../scripts/noise_table.py"


rule sensitivity_figure:
    input:
        metrics=get_sensitivity_metrics,
        results=get_sensitivity_results,
    output:
        png=report(
            "results/report/sensitivity.png",
            caption="../report/sensitivity.rst",
            category="Paper - Figure 1 (sensitivity)",
        ),
        pdf="results/report/sensitivity.pdf",
    log:
        "logs/report/sensitivity.log",
    conda:
        "../../envs/report.yaml"
    params:
        selection=lambda wildcards: dict(zip("KMt", PLAN.main_point(PLAN.sensitivity["dataset"])[0])),
        paper_name=lambda wildcards: DATASETS[PLAN.sensitivity["dataset"]]["paper_name"],
        dpi=config["report"]["dpi"],
        code=code_of("sensitivity_figure"),
    script:
        "../scripts/sensitivity_figure.py"


rule theory_figure:
    input:
        metrics=get_theory_metrics,
    output:
        png=report("results/report/theory.png", caption="../report/theory.rst", category="Paper - Theorem 1"),
        pdf="results/report/theory.pdf",
        markdown="results/report/theory.md",
        csv=report("results/report/theory.csv", caption="../report/theory_table.rst", category="Paper - Theorem 1"),
    log:
        "logs/report/theory.log",
    conda:
        "../../envs/report.yaml"
    params:
        dpi=config["report"]["dpi"],
        decimals=config["report"]["decimals"],
        code=code_of("theory_figure"),
    script:
        "../scripts/theory_figure.py"


rule test_curves:
    input:
        results=get_test_curve_results,
    output:
        png=report(
            "results/report/test_curves.png", caption="../report/test_curves.rst", category="Supplement - Test curves"
        ),
        pdf="results/report/test_curves.pdf",
        markdown="results/report/test_curves.md",
        csv=report(
            "results/report/test_curves.csv", caption="../report/test_curves.rst", category="Supplement - Test curves"
        ),
    log:
        "logs/report/test_curves.log",
    conda:
        "../../envs/report.yaml"
    params:
        dpi=config["report"]["dpi"],
        decimals=config["report"]["decimals"],
        paper_names=get_paper_names,
        code=code_of("accuracy_by_epoch"),
    script:
        "../scripts/accuracy_by_epoch.py"


rule resource_usage:
    input:
        train_fold=get_fold_benchmarks(stacked=False),
        train_stack=get_fold_benchmarks(stacked=True),
        train_final_baseline=get_final_benchmarks("train_final_baseline"),
        train_final_selected=get_final_benchmarks("train_final_selected"),
        train_final_pruned=get_final_benchmarks("train_final_pruned"),
        select_incv=get_incv_benchmarks,
        train_final_incv=get_final_benchmarks("train_final_incv"),
        train_ensemble_member=get_ensemble_member_benchmarks,
    output:
        markdown="results/report/resources.md",
        csv=report("results/report/resources.csv", caption="../report/resources.rst", category="Supplement - Resources"),
        latex="results/report/resources.tex",
    log:
        "logs/report/resources.log",
    conda:
        "../../envs/report.yaml"
    params:
        decimals=config["report"]["decimals"],
        code=code_of("resource_usage"),
    script:
        "../scripts/resource_usage.py"
