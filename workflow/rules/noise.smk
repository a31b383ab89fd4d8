rule inject_noise:
    input:
        dataset=rules.prepare_dataset.output.dataset,
    output:
        labels="results/noise/{dataset}/{noise}/seed{seed}.parquet",
    log:
        "logs/noise/{dataset}/{noise}/seed{seed}.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        asymmetric_map=get_dataset_setting("asymmetric_map"),
        code=code_of("inject_noise"),
    script:
        "../scripts/inject_noise.py"
