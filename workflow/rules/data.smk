rule prepare_dataset:
    output:
        dataset="results/data/{dataset}.npz",
    log:
        "logs/data/{dataset}.log",
    params:
        source=get_dataset_setting("source"),
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/prepare_dataset.py"
