rule train_fold:
    input:
        unpack(get_text_inputs),
        dataset=rules.prepare_dataset.output.dataset,
        labels=rules.inject_noise.output.labels,
    output:
        predictions="results/folds/{dataset}/{noise}/seed{seed}/K{K}/m{m}/k{k}.parquet",
    log:
        "logs/folds/{dataset}/{noise}/seed{seed}/K{K}/m{m}/k{k}.log",
    benchmark:
        "results/benchmarks/folds/{dataset}/{noise}/seed{seed}/K{K}/m{m}/k{k}.tsv"
    params:
        recipe=get_recipe,
    threads: 1
    resources:
        mem_mb=2000,
        **TRAINING_GPUS,
    conda:
        "../../envs/train.yaml"
    script:
        "../scripts/train_fold.py"
