from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.report.render import render_ablation

    render_ablation(
        results=list(snakemake.input.results),
        metrics=list(snakemake.input.metrics),
        rungs=list(snakemake.params.rungs),
        markdown=snakemake.output.markdown,
        csv=snakemake.output.csv,
        latex=snakemake.output.latex,
        decimals=snakemake.params.decimals,
    )
