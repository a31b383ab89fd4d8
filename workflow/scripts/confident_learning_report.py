from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.report.render import render_confident_learning

    render_confident_learning(
        tables=list(snakemake.input.tables),
        markdown=snakemake.output.markdown,
        csv=snakemake.output.csv,
        latex=snakemake.output.latex,
        png=snakemake.output.png,
        pdf=snakemake.output.pdf,
        decimals=snakemake.params.decimals,
        dpi=snakemake.params.dpi,
    )
