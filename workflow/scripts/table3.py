from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.report.render import render_table3

    render_table3(
        results=list(snakemake.input.results),
        methods=list(snakemake.params.methods),
        paper_names=dict(snakemake.params.paper_names),
        markdown=snakemake.output.markdown,
        csv=snakemake.output.csv,
        latex=snakemake.output.latex,
        decimals=snakemake.params.decimals,
    )
