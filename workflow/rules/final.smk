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
    conda:
        "../../envs/train.yaml"
    threads: 1
    # What a cluster job asks, in the rule so that a --set-resources adds to it (see train_fold).
    resources:
        mem_mb=8000,
        runtime=480,
    params:
        method=lambda wildcards: wildcards.baseline,
        recipe=get_baseline_recipe,
        gamma=None,
        options=get_baseline_options,
        code=code_of("train_final"),
    script:
        "../scripts/train_final.py"


rule train_final_selected:
    input:
        unpack(get_text_inputs),
        dataset=rules.prepare_dataset.output.dataset,
        labels=rules.inject_noise.output.labels,
        selection=rules.select_samples.output.selection,
    output:
        result="results/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/{method}.json",
    log:
        "logs/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/{method}.log",
    benchmark:
        "results/benchmarks/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/{method}.tsv"
    wildcard_constraints:
        method="|".join(method for method in SELECTION_METHODS if method != "cl_prune"),
    conda:
        "../../envs/train.yaml"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=480,
    params:
        method=lambda wildcards: wildcards.method,
        recipe=get_recipe,
        gamma=get_gamma,
        options={},
        code=code_of("train_final"),
    script:
        "../scripts/train_final.py"


# Prune-and-retrain: a model on confident learning's kept set, which depends on the folds (K, M) and not on t, so a
# change of t retrains none of these.
rule train_final_pruned:
    input:
        unpack(get_text_inputs),
        dataset=rules.prepare_dataset.output.dataset,
        labels=rules.inject_noise.output.labels,
        selection=get_pruning_selection,
    output:
        result="results/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/cl_prune.json",
    log:
        "logs/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/cl_prune.log",
    benchmark:
        "results/benchmarks/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/cl_prune.tsv"
    conda:
        "../../envs/train.yaml"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=480,
    params:
        method="cl_prune",
        recipe=get_recipe,
        gamma=None,
        options={},
        code=code_of("train_final"),
    script:
        "../scripts/train_final.py"


# INCV's final model: its selection's samples, trained as ss_only's (t, K and M do not touch it).
rule train_final_incv:
    input:
        unpack(get_text_inputs),
        dataset=rules.prepare_dataset.output.dataset,
        labels=rules.inject_noise.output.labels,
        selection=rules.select_incv.output.selection,
    output:
        result="results/final/{dataset}/{noise}/seed{seed}/incv.json",
    log:
        "logs/final/{dataset}/{noise}/seed{seed}/incv.log",
    benchmark:
        "results/benchmarks/final/{dataset}/{noise}/seed{seed}/incv.tsv"
    conda:
        "../../envs/train.yaml"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=480,
    params:
        method="incv",
        recipe=get_recipe,
        gamma=None,
        options={},
        code=code_of("train_final"),
    script:
        "../scripts/train_final.py"


# A member of CE + mixup's ensemble at E-NKCVS's budget: the same for every (K, M), so a change of K or M trains only
# the members it adds.
rule train_ensemble_member:
    input:
        unpack(get_text_inputs),
        dataset=rules.prepare_dataset.output.dataset,
        labels=rules.inject_noise.output.labels,
    output:
        probabilities="results/final/{dataset}/{noise}/seed{seed}/ce_mixup_ensemble/member{member}.parquet",
    log:
        "logs/final/{dataset}/{noise}/seed{seed}/ce_mixup_ensemble/member{member}.log",
    benchmark:
        "results/benchmarks/final/{dataset}/{noise}/seed{seed}/ce_mixup_ensemble/member{member}.tsv"
    wildcard_constraints:
        member=r"[1-9][0-9]*",
    conda:
        "../../envs/train.yaml"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=480,
    params:
        recipe=get_recipe,
        code=code_of("train_ensemble_member"),
    script:
        "../scripts/train_ensemble_member.py"


rule average_ensemble:
    input:
        dataset=rules.prepare_dataset.output.dataset,
        members=get_ensemble_members,
    output:
        result="results/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/ce_mixup_ensemble.json",
    log:
        "logs/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/ce_mixup_ensemble.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        code=code_of("average_ensemble"),
    script:
        "../scripts/average_ensemble.py"
