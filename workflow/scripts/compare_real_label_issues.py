from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.issues import compare_real_label_issues

    compare_real_label_issues(
        predictions=list(snakemake.input.predictions),
        labels=list(snakemake.input.labels),
        threshold=snakemake.params.threshold,
        markdown=snakemake.output.markdown,
        csv=snakemake.output.csv,
        provenance_fields=dict(snakemake.wildcards, code=snakemake.params.code),
    )
