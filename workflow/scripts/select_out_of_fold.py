import sys

sys.stderr = open(snakemake.log[0], "w")

from enkcvs.steps import select_out_of_fold

select_out_of_fold(
    probabilities=snakemake.input.probabilities,
    labels=snakemake.input.labels,
    true_labels=snakemake.input.get("true_labels"),
    settings=dict(snakemake.params.settings),
    table=snakemake.output.table,
    metrics=snakemake.output.metrics,
)
