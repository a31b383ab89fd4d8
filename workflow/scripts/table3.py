import sys

sys.stderr = open(snakemake.log[0], "w")

from enkcvs.report import render_table3

render_table3(
    results=list(snakemake.input.results),
    methods=list(snakemake.params.methods),
    paper_names=dict(snakemake.params.paper_names),
    markdown=snakemake.output.markdown,
    csv=snakemake.output.csv,
    latex=snakemake.output.latex,
    decimals=snakemake.params.decimals,
)
