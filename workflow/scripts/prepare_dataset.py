import sys

sys.stderr = open(snakemake.log[0], "w")

from enkcvs.steps import prepare_dataset

prepare_dataset(
    source=snakemake.params.source, options=dict(snakemake.params.options), output=snakemake.output.dataset
)
