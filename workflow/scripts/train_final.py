import sys

sys.stderr = open(snakemake.log[0], "w")

from enkcvs.steps import train_final

train_final(
    dataset=snakemake.input.dataset,
    labels=snakemake.input.labels,
    tokens=snakemake.input.get("tokens"),
    selection=snakemake.input.get("selection"),
    method=snakemake.params.method,
    recipe=snakemake.params.recipe,
    gamma=snakemake.params.gamma,
    options=dict(snakemake.params.options),
    seed=int(snakemake.wildcards.seed),
    threads=snakemake.threads,
    output=snakemake.output.result,
    provenance_fields=dict(snakemake.wildcards),
)
