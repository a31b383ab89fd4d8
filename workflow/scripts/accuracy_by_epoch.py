from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.report.render import render_test_curves

    render_test_curves(
        results=list(snakemake.input.results),
        paper_names=dict(snakemake.params.paper_names),
        markdown=snakemake.output.markdown,
        csv=snakemake.output.csv,
        png=snakemake.output.png,
        pdf=snakemake.output.pdf,
        dpi=snakemake.params.dpi,
        decimals=snakemake.params.decimals,
    )
