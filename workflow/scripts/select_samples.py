import sys

sys.stderr = open(snakemake.log[0], "w")

from enkcvs.steps import select_samples

select_samples(
    predictions=list(snakemake.input.predictions),
    labels=snakemake.input.labels,
    threshold=int(snakemake.wildcards.t),
    table=snakemake.output.selection,
    metrics=snakemake.output.metrics,
    provenance_fields=dict(snakemake.wildcards),
)
