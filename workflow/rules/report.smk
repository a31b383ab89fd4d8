rule table1:
    input:
        metrics=get_table1_metrics,
    output:
        markdown="results/report/table1.md",
        csv="results/report/table1.csv",
        latex="results/report/table1.tex",
    log:
        "logs/report/table1.log",
    params:
        decimals=config["report"]["decimals"],
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/table1.py"


rule table2:
    input:
        results=get_table2_results,
    output:
        markdown="results/report/table2.md",
        csv="results/report/table2.csv",
        latex="results/report/table2.tex",
    log:
        "logs/report/table2.log",
    params:
        decimals=config["report"]["decimals"],
        methods=config["methods"],
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/table2.py"


rule sensitivity_figure:
    input:
        metrics=get_sensitivity_metrics,
        results=get_sensitivity_results,
    output:
        png="results/report/sensitivity.png",
        pdf="results/report/sensitivity.pdf",
    log:
        "logs/report/sensitivity.log",
    params:
        selection=canonical(SELECTION),
        dpi=config["report"]["dpi"],
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/sensitivity_figure.py"


rule theory_figure:
    input:
        metrics=get_theory_metrics,
    output:
        png="results/report/theory.png",
        pdf="results/report/theory.pdf",
    log:
        "logs/report/theory.log",
    params:
        dpi=config["report"]["dpi"],
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/theory_figure.py"
