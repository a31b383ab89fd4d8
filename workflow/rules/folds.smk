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
    conda:
        "../../envs/train.yaml"
    threads: 1
    resources:
        **TRAINING_GPUS,
        mem_mb=2000,
    params:
        recipe=get_recipe,
    script:
        "../scripts/train_fold.py"
