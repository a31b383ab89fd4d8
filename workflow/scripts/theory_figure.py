import sys

sys.stderr = open(snakemake.log[0], "w")

from enkcvs.report import render_theory_figure

render_theory_figure(
    metrics=list(snakemake.input.metrics),
    png=snakemake.output.png,
    pdf=snakemake.output.pdf,
    dpi=snakemake.params.dpi,
)
