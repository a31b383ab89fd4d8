from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.report.render import render_table2

    render_table2(
        results=list(snakemake.input.results),
        methods=list(snakemake.params.methods),
        markdown=snakemake.output.markdown,
        csv=snakemake.output.csv,
        latex=snakemake.output.latex,
        decimals=snakemake.params.decimals,
        paper_names=dict(snakemake.params.paper_names),
        incv_iterations={
            name: dataset["baselines"]["incv"]["iterations"] for name, dataset in snakemake.config["datasets"].items()
        },
    )
