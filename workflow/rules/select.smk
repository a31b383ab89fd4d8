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


# INCV's selection (Chen et al. 2019), a baseline's: its 2 N models train one after another inside this job, each
# iteration on what the ones before selected, so the job is a training job (TRAINING_RULES) and depends on no fold.
rule select_incv:
    input:
        unpack(get_text_inputs),
        dataset=rules.prepare_dataset.output.dataset,
        labels=rules.inject_noise.output.labels,
    output:
        selection="results/selection/{dataset}/{noise}/seed{seed}/incv/selection.parquet",
        metrics="results/selection/{dataset}/{noise}/seed{seed}/incv/metrics.json",
    log:
        "logs/selection/{dataset}/{noise}/seed{seed}/incv.log",
    benchmark:
        "results/benchmarks/selection/{dataset}/{noise}/seed{seed}/incv.tsv"
    conda:
        "../../envs/train.yaml"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=960,
    params:
        recipe=get_recipe,
        iterations=get_incv_iterations,
        code=code_of("select_incv"),
    script:
        "../scripts/select_incv.py"
