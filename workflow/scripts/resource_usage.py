from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.report.render import render_resource_usage

    render_resource_usage(
        benchmarks={rule: list(files) for rule, files in snakemake.input.items()},
        markdown=snakemake.output.markdown,
        csv=snakemake.output.csv,
        latex=snakemake.output.latex,
        decimals=snakemake.params.decimals,
    )
