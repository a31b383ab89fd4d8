from enkcvs.pipeline.job import logged_job

with logged_job(snakemake.log[0]):
    from enkcvs.pipeline.steps.folds import unstack_fold

    unstack_fold(
        stack=snakemake.input.stack,
        iteration=int(snakemake.wildcards.m),
        fold=int(snakemake.wildcards.k),
        output=snakemake.output.predictions,
        provenance_fields=dict(snakemake.wildcards, code=snakemake.params.code),
    )
