import sys

sys.stderr = open(snakemake.log[0], "w")

from enkcvs.report import render_ranking

render_ranking(
    tables=list(snakemake.input.tables),
    markdown=snakemake.output.markdown,
    csv=snakemake.output.csv,
    latex=snakemake.output.latex,
    decimals=snakemake.params.decimals,
)
