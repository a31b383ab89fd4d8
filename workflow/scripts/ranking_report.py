from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.report.render import render_ranking

    render_ranking(
        tables=list(snakemake.input.tables),
        markdown=snakemake.output.markdown,
        csv=snakemake.output.csv,
        latex=snakemake.output.latex,
        decimals=snakemake.params.decimals,
    )
