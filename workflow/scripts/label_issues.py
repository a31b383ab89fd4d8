from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.issues import write_label_issues

    write_label_issues(
        dataset=snakemake.input.dataset,
        predictions=list(snakemake.input.predictions),
        labels=list(snakemake.input.labels),
        threshold=snakemake.params.threshold,
        top=snakemake.params.top,
        table=snakemake.output.table,
        summary=snakemake.output.summary,
        provenance_fields=dict(snakemake.wildcards, code=snakemake.params.code),
    )
