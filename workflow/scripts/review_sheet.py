from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.report.render import render_review_sheet

    # review_images passes png, pdf and dpi; review_markdown passes markdown and a table's features (code is the
    # rule's fingerprint, for Snakemake)
    render_review_sheet(
        dataset=snakemake.input.dataset,
        table=snakemake.input.table,
        **{key: value for key, value in snakemake.params.items() if key != "code"},
        **dict(snakemake.output.items()),
    )
