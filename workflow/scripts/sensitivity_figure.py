from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.report.render import render_sensitivity_figure

    render_sensitivity_figure(
        metrics=list(snakemake.input.metrics),
        results=list(snakemake.input.results),
        selection=dict(snakemake.params.selection),
        paper_name=snakemake.params.paper_name,
        png=snakemake.output.png,
        pdf=snakemake.output.pdf,
        dpi=snakemake.params.dpi,
    )
