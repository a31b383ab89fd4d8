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
    # What a cluster job asks. Here, not in a profile: a --set-resources on the command line replaces a profile's
    # set-resources, but adds to a rule's own. The runtimes (minutes) are generous guesses, not measurements.
    resources:
        mem_mb=8000,
        runtime=240,
    params:
        recipe=get_recipe,
        canonical=get_canonical,
        code=code_of("train_fold"),
    script:
        "../scripts/train_fold.py"


# Folds trained stacked: an execution choice a run makes with --config stacked_folds=True (no shipped profile does),
# for the datasets that can (enkcvs.pipeline.plan.Plan.stackable). One train_stack job trains the M x K fold models
# of a (dataset, noise, seed, K), M the most iterations any of its selections votes over; each fold's table is taken
# from it by a local unstack_fold job, where train_fold would write it.
if PLAN.stacked_datasets():

    ruleorder: unstack_fold > train_fold

    rule train_stack:
        input:
            dataset=rules.prepare_dataset.output.dataset,
            labels=rules.inject_noise.output.labels,
        output:
            stack="results/stacks/{dataset}/{noise}/seed{seed}/K{K}.parquet",
        log:
            "logs/stacks/{dataset}/{noise}/seed{seed}/K{K}.log",
        benchmark:
            "results/benchmarks/stacks/{dataset}/{noise}/seed{seed}/K{K}.tsv"
        wildcard_constraints:
            dataset="|".join(PLAN.stacked_datasets()),
        conda:
            "../../envs/train.yaml"
        threads: 1
        resources:
            mem_mb=32000,
            runtime=720,
        params:
            recipe=get_recipe,
            iterations=get_stack_iterations,
            canonical=get_canonical,
            code=code_of("train_stack"),
        script:
            "../scripts/train_stack.py"

    rule unstack_fold:
        input:
            stack=rules.train_stack.output.stack,
        output:
            predictions=rules.train_fold.output.predictions,
        log:
            "logs/folds/{dataset}/{noise}/seed{seed}/K{K}/m{m}/k{k}.unstack.log",
        wildcard_constraints:
            dataset="|".join(PLAN.stacked_datasets()),
        localrule: True
        conda:
            "../../envs/analysis.yaml"
        params:
            code=code_of("unstack_fold"),
        script:
            "../scripts/unstack_fold.py"
