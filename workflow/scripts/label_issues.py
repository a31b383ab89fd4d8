from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.issues import write_label_issues

    write_label_issues(
        dataset=snakemake.input.dataset,
        selection=snakemake.input.selection,
        top=snakemake.params.top,
        table=snakemake.output.table,
        summary=snakemake.output.summary,
    )
