import sys

sys.stderr = open(snakemake.log[0], "w")

from enkcvs.report import render_label_issue_grid

render_label_issue_grid(
    dataset=snakemake.input.dataset,
    table=snakemake.input.table,
    top=snakemake.params.top,
    png=snakemake.output.png,
    dpi=snakemake.params.dpi,
)
