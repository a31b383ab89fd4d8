from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.report.render import render_review_sheet

    # review_images passes png, pdf and dpi; review_markdown passes markdown and a table's features
    render_review_sheet(
        dataset=snakemake.input.dataset,
        table=snakemake.input.table,
        **dict(snakemake.params.items()),
        **dict(snakemake.output.items()),
    )
