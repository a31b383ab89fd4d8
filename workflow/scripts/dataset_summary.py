from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.report.render import render_dataset_summary

    render_dataset_summary(
        datasets=dict(zip(snakemake.params.names, snakemake.input.datasets)),
        markdown=snakemake.output.markdown,
        csv=snakemake.output.csv,
        latex=snakemake.output.latex,
    )
