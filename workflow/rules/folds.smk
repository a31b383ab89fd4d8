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
        dataset=dataset_other_than(selection_datasets()),
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


# One rule per (dataset, K, M) and group of noises and seeds (a rule's outputs are a fixed list:
# enkcvs.pipeline.config.selection_jobs): the M x K fold tables of a selection, the same files train_fold writes,
# from one job (config training_jobs, stacked_folds).
for _group in SELECTION_JOBS:

    rule:
        name:
            _group.rule
        input:
            unpack(get_text_inputs),
            dataset=rules.prepare_dataset.output.dataset,
            labels=rules.inject_noise.output.labels,
        output:
            predictions=expand(
                rules.train_fold.output.predictions,
                K=_group.K,
                m=range(1, _group.M + 1),
                k=range(1, _group.K + 1),
                allow_missing=True,
            ),
        log:
            expand("logs/folds/{dataset}/{noise}/seed{seed}/K{K}/selection.log", K=_group.K, allow_missing=True),
        benchmark:
            expand(
                "results/benchmarks/folds/{dataset}/{noise}/seed{seed}/K{K}/selection.tsv",
                K=_group.K,
                allow_missing=True,
            )[0]
        wildcard_constraints:
            dataset=re.escape(_group.dataset),
            noise="|".join(map(re.escape, _group.noises)),
            seed="|".join(map(str, _group.seeds)),
        conda:
            "../../envs/train.yaml"
        threads: 1
        resources:
            **TRAINING_GPUS,
            mem_mb=2000 + (500 * _group.M * _group.K if _group.stacked else 0),
        params:
            recipe=get_recipe,
            num_folds=_group.K,
            iterations=_group.M,
            stacked=_group.stacked,
        script:
            "../scripts/train_selection.py"
