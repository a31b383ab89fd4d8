import sys

sys.stderr = open(snakemake.log[0], "w")

from enkcvs.report import render_table3

render_table3(
    markdown=snakemake.output.markdown,
    csv=snakemake.output.csv,
    latex=snakemake.output.latex,
    decimals=snakemake.params.decimals,
)
