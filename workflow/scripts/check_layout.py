import sys

sys.stderr = open(snakemake.log[0], "w")

from enkcvs.steps import check_layout

check_layout(source=snakemake.params.source, options=dict(snakemake.params.options), output=snakemake.output.record)
