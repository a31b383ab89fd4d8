rule train_final_baseline:
    input:
        unpack(get_text_inputs),
        dataset=rules.prepare_dataset.output.dataset,
        labels=rules.inject_noise.output.labels,
    output:
        result="results/final/{dataset}/{noise}/seed{seed}/{baseline}.json",
    log:
        "logs/final/{dataset}/{noise}/seed{seed}/{baseline}.log",
    benchmark:
        "results/benchmarks/final/{dataset}/{noise}/seed{seed}/{baseline}.tsv"
    wildcard_constraints:
        dataset=dataset_other_than(finals_datasets()),
    conda:
        "../../envs/train.yaml"
    threads: 1
    resources:
        **TRAINING_GPUS,
        mem_mb=2000,
    params:
        method=lambda wildcards: wildcards.baseline,
        recipe=get_baseline_recipe,
        gamma=None,
        options=get_baseline_options,
    script:
        "../scripts/train_final.py"


rule train_final_selected:
    input:
        unpack(get_text_inputs),
        dataset=rules.prepare_dataset.output.dataset,
        labels=rules.inject_noise.output.labels,
        selection=get_final_selection,
    output:
        result="results/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/{method}.json",
    log:
        "logs/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/{method}.log",
    benchmark:
        "results/benchmarks/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/{method}.tsv"
    wildcard_constraints:
        dataset=dataset_other_than(finals_datasets()),
    conda:
        "../../envs/train.yaml"
    threads: 1
    resources:
        **TRAINING_GPUS,
        mem_mb=2000,
    params:
        method=lambda wildcards: wildcards.method,
        recipe=get_recipe,
        gamma=get_gamma,
        options={},
    script:
        "../scripts/train_final.py"


# One rule per dataset and group of noises and seeds that train the same final models (a rule's outputs are a fixed
# list: enkcvs.pipeline.config.finals_jobs): a setting's final results, the same files train_final_* write, from one
# job (config training_jobs: setting, stacked_finals).
for _job in FINALS_JOBS:

    rule:
        name:
            _job.rule
        input:
            unpack(get_text_inputs),
            dataset=rules.prepare_dataset.output.dataset,
            labels=rules.inject_noise.output.labels,
            selections=finals_selections(_job),
        output:
            results=[final_path(None, model, pattern_only=True) for model in _job.models],
        log:
            "logs/final/{dataset}/{noise}/seed{seed}/finals.log",
        benchmark:
            "results/benchmarks/final/{dataset}/{noise}/seed{seed}/finals.tsv"
        wildcard_constraints:
            dataset=re.escape(_job.dataset),
            noise="|".join(map(re.escape, _job.noises)),
            seed="|".join(map(str, _job.seeds)),
        conda:
            "../../envs/train.yaml"
        threads: 1
        resources:
            **TRAINING_GPUS,
            mem_mb=2000 + (500 * len(_job.models) if _job.stacked else 0),
        params:
            models=finals_params(_job),
            stacked=_job.stacked,
        script:
            "../scripts/train_finals.py"
