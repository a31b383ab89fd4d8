# E-NKCVS reproduction workflow (IJCAI-21). Path scheme, wildcards always in this order:
#   results/data/{dataset}.npz
#   results/noise/{dataset}/{noise}/seed{seed}.parquet
#   results/folds/{dataset}/{noise}/seed{seed}/K{K}/m{m}/k{k}.parquet
#   results/selection/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/{selection.parquet,metrics.json}
#   results/final/{dataset}/{noise}/seed{seed}/ce.json
#   results/final/{dataset}/{noise}/seed{seed}/K{K}/M{M}/t{t}/{method}.json
#   results/report/...
# logs/ mirrors results/.

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/noise.smk"
include: "workflow/rules/folds.smk"
include: "workflow/rules/select.smk"
include: "workflow/rules/final.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        get_final_output(),
