import sys

sys.stderr = open(snakemake.log[0], "w")

from enkcvs.steps import prepare_dataset

prepare_dataset(source=snakemake.params.source, output=snakemake.output.dataset)
