# On a cluster these run in the Snakemake process itself (cheap, and downloads need the login node's network).
localrules:
    check_layout,
    prepare_dataset,
    tokenize,


rule check_layout:
    output:
        record="results/data/{dataset}.layout.json",
    log:
        "logs/data/{dataset}.layout.log",
    conda:
        "../../envs/data.yaml"
    params:
        source=get_dataset_setting("source"),
        options=get_source_options,
        code=code_of("check_layout"),
    script:
        "../scripts/check_layout.py"


rule prepare_dataset:
    input:
        layout=get_layout_check,
    output:
        dataset="results/data/{dataset}.npz",
    log:
        "logs/data/{dataset}.log",
    conda:
        "../../envs/data.yaml"
    params:
        source=get_dataset_setting("source"),
        options=get_source_options,
        code=code_of("prepare_dataset"),
    script:
        "../scripts/prepare_dataset.py"


rule tokenize:
    input:
        dataset=rules.prepare_dataset.output.dataset,
    output:
        tokens="results/tokens/{dataset}/{tokenizer}.npz",
    log:
        "logs/tokens/{dataset}/{tokenizer}.log",
    conda:
        "../../envs/text.yaml"
    params:
        model_name=get_model_name,
        max_length=get_dataset_setting("max_length"),
        code=code_of("tokenize"),
    script:
        "../scripts/tokenize.py"
