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
    wildcard_constraints:
        dataset=per_fold_dataset(),
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


# One rule per K (a rule's outputs are a fixed list): the K fold tables of iteration m of a stacked dataset, the
# same files train_fold writes, from one job.
if stacked_datasets():
    for _K in fold_counts():

        rule:
            name:
                f"train_iteration_K{_K}"
            input:
                dataset=rules.prepare_dataset.output.dataset,
                labels=rules.inject_noise.output.labels,
            output:
                predictions=expand(rules.train_fold.output.predictions, K=_K, k=range(1, _K + 1), allow_missing=True),
            log:
                expand("logs/folds/{dataset}/{noise}/seed{seed}/K{K}/m{m}/iteration.log", K=_K, allow_missing=True),
            benchmark:
                expand(
                    "results/benchmarks/folds/{dataset}/{noise}/seed{seed}/K{K}/m{m}/iteration.tsv",
                    K=_K,
                    allow_missing=True,
                )[0]
            wildcard_constraints:
                dataset="|".join(stacked_datasets()),
            conda:
                "../../envs/train.yaml"
            threads: 1
            resources:
                **TRAINING_GPUS,
                mem_mb=2000 + 500 * _K,
            params:
                recipe=get_recipe,
                num_folds=_K,
            script:
                "../scripts/train_iteration.py"
