rule select_samples:
    input:
        predictions=get_fold_predictions,
        labels=rules.inject_noise.output.labels,
    output:
        selection="results/selection/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/selection.parquet",
        metrics="results/selection/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/metrics.json",
    log:
        "logs/selection/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        code=code_of("select_samples"),
    script:
        "../scripts/select_samples.py"
