import sys

sys.stderr = open(snakemake.log[0], "w")

from enkcvs.steps import write_label_issues

write_label_issues(
    dataset=snakemake.input.dataset,
    selection=snakemake.input.selection,
    top=snakemake.params.top,
    table=snakemake.output.table,
    summary=snakemake.output.summary,
)
