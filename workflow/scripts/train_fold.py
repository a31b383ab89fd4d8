import sys

sys.stderr = open(snakemake.log[0], "w")

from enkcvs.steps import train_fold

train_fold(
    dataset=snakemake.input.dataset,
    labels=snakemake.input.labels,
    tokens=snakemake.input.get("tokens"),
    recipe=snakemake.params.recipe,
    seed=int(snakemake.wildcards.seed),
    num_folds=int(snakemake.wildcards.K),
    iteration=int(snakemake.wildcards.m),
    fold=int(snakemake.wildcards.k),
    threads=snakemake.threads,
    output=snakemake.output.predictions,
    provenance_fields=dict(snakemake.wildcards),
)
