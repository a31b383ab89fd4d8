from enkcvs.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.render import render_label_issue_grid

    render_label_issue_grid(
        dataset=snakemake.input.dataset,
        table=snakemake.input.table,
        top=snakemake.params.top,
        png=snakemake.output.png,
        dpi=snakemake.params.dpi,
    )
