# E-NKCVS reproduction workflow (IJCAI-21). Path scheme, wildcards always in this order:
#   results/data/{dataset}.npz (user-supplied data: results/data/{dataset}.layout.json first)
#   results/tokens/{dataset}/{tokenizer}.npz (text datasets)
#   results/noise/{dataset}/{noise}/seed{seed}.parquet
#   results/folds/{dataset}/{noise}/seed{seed}/K{K}/m{m}/k{k}.parquet
#   results/selection/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/{selection.parquet,metrics.json}
#   results/final/{dataset}/{noise}/seed{seed}/ce.json
#   results/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/{method}.json
#   results/comparison/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/{confident_learning,ranking}.parquet
#   results/issues/{dataset}/{label_issues.parquet,summary.md,review.{png,pdf,md}}, results/oof/{name}/...
#   results/report/...
# logs/ mirrors results/.

from snakemake.utils import min_version

min_version("9.0")


# A config file given with --configfile replaces the default one as a whole (Snakemake would otherwise merge it into
# the default key by key, keeping the default's datasets).
if not workflow.overwrite_configfiles:

    configfile: f"{workflow.basedir}/config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/noise.smk"
include: "workflow/rules/folds.smk"
include: "workflow/rules/select.smk"
include: "workflow/rules/final.smk"
include: "workflow/rules/confident.smk"
include: "workflow/rules/report_inputs.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/issues.smk"


localrules:
    all,


rule all:
    input:
        get_final_output(),
