from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.report.render import render_matched

    render_matched(
        results=list(snakemake.input.results),
        methods=list(snakemake.params.methods),
        markdown=snakemake.output.markdown,
        csv=snakemake.output.csv,
        latex=snakemake.output.latex,
        decimals=snakemake.params.decimals,
    )
