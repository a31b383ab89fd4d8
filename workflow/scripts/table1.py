from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.report.render import render_table1

    render_table1(
        metrics=list(snakemake.input.metrics),
        markdown=snakemake.output.markdown,
        csv=snakemake.output.csv,
        latex=snakemake.output.latex,
        decimals=snakemake.params.decimals,
        paper_names=dict(snakemake.params.paper_names),
    )
