from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.report.render import render_theory_figure

    render_theory_figure(
        metrics=list(snakemake.input.metrics),
        png=snakemake.output.png,
        pdf=snakemake.output.pdf,
        markdown=snakemake.output.markdown,
        csv=snakemake.output.csv,
        dpi=snakemake.params.dpi,
        decimals=snakemake.params.decimals,
    )
