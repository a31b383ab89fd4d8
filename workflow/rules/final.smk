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
    resources:
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
    conda:
        "../../envs/train.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        method=lambda wildcards: wildcards.method,
        recipe=get_recipe,
        gamma=get_gamma,
        options={},
    script:
        "../scripts/train_final.py"
