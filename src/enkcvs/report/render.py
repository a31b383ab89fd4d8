"""The workflow's report entry points: each reads a report rule's inputs, builds its table (:mod:`enkcvs.report.tables`,
the paper-shaped tables of :mod:`enkcvs.report.comparison`) or figure (:mod:`enkcvs.report.figures`) and writes it
(:mod:`enkcvs.report.tabular`).

``workflow/scripts/*.py`` call these functions and nothing else of the report; the captions written under the tables
live here, beside the one call that writes each of them.
"""

from enkcvs.data.datasets import load_dataset
from enkcvs.io import PathLike, atomic_path, read_table
from enkcvs.report.curves import curve_summary, epoch_curves
from enkcvs.report.dataset_summary import dataset_summary, describe_dataset
from enkcvs.report.figures import comparison_figure, sensitivity_figure, test_curve_figure, theory_figure
from enkcvs.report.output_provenance import DIFFERS_MARK
from enkcvs.report.paper_table1 import compare_table1, format_table1
from enkcvs.report.paper_table2 import compare_table2, format_table2
from enkcvs.report.paper_table3 import table3
from enkcvs.report.readings import LAST_EPOCHS
from enkcvs.report.tables import (
    CONFIDENT_LEARNING_SCORES,
    RANKING_GAPS,
    RANKING_SCORES,
    ablation_table,
    collect_records,
    confident_learning_table,
    format_ablation,
    format_noise_table,
    noise_records,
    noise_table,
    published_table1,
    ranking_table,
    resource_table,
    sensitivity_table,
    table1,
    table2,
    theory_table,
)
from enkcvs.report.tabular import write_table

TABLE1_CAPTION = (
    "Selection quality at (K, M, t): sizes of the clean set CS, the selected set SS and their intersection CSS "
    "(means over seeds), precision = |CSS| / |SS| and recall = |CSS| / |CS| (%, means over seeds), each beside the "
    "corrected Theorem 1's expectation from the measured fold accuracies. Where a row matches the paper's Table 1 "
    "(CIFAR-10, K = 10, M = 5, t = 2) its number and the difference (ours - paper) follow."
)
TABLE2_CAPTION = (
    "Test accuracy (%) of the final models on the clean test set, mean ± std over seeds (runs per cell: table2.csv), "
    "read three ways for every method alike. The protocol is the last epoch: the model kept and the reading compared "
    "and ranked, no clean validation data being there to pick an epoch by. Beside it, from each model's accuracy "
    f"after every epoch: the mean of the last {LAST_EPOCHS} epochs, as Co-teaching's authors report (of all epochs "
    "where the models trained fewer, said in the cell), and the best epoch, an optimistic reading (the test set picks "
    "it), as many papers report (CIFAR-N's authors among them). A dataset in parentheses is compared with that paper "
    "dataset: 'paper' is the paper's Table 2 cell as printed (mean ± std over 5 runs), Δ = the row's reading - paper. "
    "Bold: the best last-epoch mean of each dataset and noise setting. 'missing': a configured run without a result; "
    "'—': a reading of results recorded without their accuracy after every epoch. 'trainings': the models one seed "
    "of the method trains from scratch, each for its recipe's epochs: 1 for a method of one final model; 2 for "
    "Co-teaching, its two networks trained together; K·M fold models and 1 final model for a method that needs the "
    "fold models (E-NKCVS's selection, or confident learning's on the same folds), a fold model training on "
    "(K - 1)/K of the data; M (K - 1) + 1 for the CE + mixup ensemble, as many as E-NKCVS's K·M + 1 come to in "
    "trainings on the full data; 2 N + 1 at most for INCV, two models in each of its N iterations and its final "
    "model. "
    f"{DIFFERS_MARK}: the cell pools outputs that differ in commit, code fingerprint, device, precision (bf16 or "
    "not), torch's thread count or torch's version, or where one output's record holds a field another's lacks "
    "(table2.csv: 'differs' names which, 'provenance' holds each seed's)."
)

NOISE_CAPTION = (
    "Injected noise per dataset and setting: the asymmetric map (none: symmetric noise) and how many of the Q classes "
    "flip, the share of wrong labels (given != true, %, mean over seeds; the range where the seeds differ) and the "
    "forget rate co-teaching trains with under datasets.<d>.baselines.coteaching.forget_rate 'nominal' (the rate "
    "epsilon) and 'actual' (the share of wrong labels, measured by each seed's job). Exactly round(epsilon * n_c) "
    "labels of each flipped class c change, so the share is epsilon up to rounding under symmetric noise and below it "
    "under an asymmetric map. 'real' noise is left out (true labels unknown)."
)


def render_table1(
    *,
    metrics: list[PathLike],
    paper_names: dict[str, str | None],
    markdown: PathLike,
    csv: PathLike,
    latex: PathLike,
    decimals: int,
) -> None:
    """Table 1 from the selection metrics JSONs: CSV of the reproduced rows (with their sources); Markdown and LaTeX
    in the paper's layout (:func:`enkcvs.report.paper_table1.format_table1`): set sizes, precision and recall with the
    corrected Theorem 1's expectation and, where the paper has the row, its number and the difference."""
    reproduced = table1(collect_records(metrics))
    readable = format_table1(compare_table1(reproduced, paper_names=paper_names), decimals=decimals)
    write_table(
        reproduced,
        markdown=markdown,
        csv=csv,
        latex=latex,
        decimals=decimals,
        readable=readable,
        caption=TABLE1_CAPTION,
        group_rows=True,
    )


def render_table2(
    *,
    results: list[PathLike],
    methods: list[str],
    paper_names: dict[str, str | None],
    markdown: PathLike,
    csv: PathLike,
    latex: PathLike,
    decimals: int,
    incv_iterations: dict[str, int],
) -> None:
    """Table 2 from the final-model JSONs: long CSV (each reading reproduced, published, differences, what each cell
    cost and ran with, sources); Markdown and LaTeX in the paper's layout
    (:func:`enkcvs.report.paper_table2.format_table2`: a row per dataset, method and reading, a column per noise
    setting, the paper's number and the difference beside each reproduced one, the best last-epoch mean in bold).
    ``incv_iterations``: INCV's iterations N per dataset (``baselines.incv.iterations``)."""
    comparison = compare_table2(
        table2(collect_records(results), methods=methods, incv_iterations=incv_iterations), paper_names=paper_names
    )
    write_table(
        comparison,
        markdown=markdown,
        csv=csv,
        latex=latex,
        decimals=decimals,
        readable=format_table2(comparison, decimals=decimals),
        readable_latex=format_table2(comparison, decimals=decimals, bold="latex"),
        caption=TABLE2_CAPTION,
        group_rows=True,
    )


TEST_CURVES_CAPTION = (
    "Clean test accuracy (%) of final models after every epoch (those datasets.<d>.baselines.<method>.test_curve "
    "draws; the whole curve in test_curves.csv and test_curves.png): its peak and the first epoch reaching it, and the "
    "last epoch's, the model kept and the protocol's reading in Table 2, beside the paper's Table 2 cell. The test set "
    "chooses no model: its best epoch is Table 2's optimistic reading, never the model kept."
)


def render_test_curves(
    *,
    results: list[PathLike],
    paper_names: dict[str, str | None],
    markdown: PathLike,
    csv: PathLike,
    png: PathLike,
    pdf: PathLike,
    dpi: int,
    decimals: int,
) -> None:
    """The clean test curves of the final models ``results`` (:mod:`enkcvs.report.curves`): every epoch as CSV, the
    peak and last epoch per model beside the paper's cell as Markdown, and the curves as a figure."""
    curves = epoch_curves(collect_records(results))
    summary = curve_summary(curves, paper_names=paper_names)
    test_curve_figure(curves, summary, png=png, pdf=pdf, dpi=dpi)
    with atomic_path(csv) as tmp:
        curves.to_csv(tmp, index=False)
    with atomic_path(markdown) as tmp:
        table = summary.to_markdown(index=False, floatfmt=f".{decimals}f")
        tmp.write_text(f"{table}\n\n{TEST_CURVES_CAPTION}\n")


def render_ablation(
    *,
    results: list[PathLike],
    metrics: list[PathLike],
    rungs: list[str],
    markdown: PathLike,
    csv: PathLike,
    latex: PathLike,
    decimals: int,
) -> None:
    """The ablation ladder from the main selections' metrics and the final models of every rung (a rung the workflow
    trains nowhere, CE + mixup on a recipe without mixup, is left out)."""
    records = collect_records(results)
    rungs = [rung for rung in rungs if rung in set(records["method"])]
    table = ablation_table(records, collect_records(metrics), rungs=rungs)
    write_table(
        table,
        markdown=markdown,
        csv=csv,
        latex=latex,
        decimals=decimals,
        readable=format_ablation(table, rungs=rungs, decimals=decimals),
    )


def render_table3(
    *,
    results: list[PathLike],
    methods: list[str],
    paper_names: dict[str, str | None],
    markdown: PathLike,
    csv: PathLike,
    latex: PathLike,
    decimals: int,
) -> None:
    """Table 3 (Clothing-1M, WebVision) as published, each row's source marked, beside the final-model JSONs of the
    real-noise runs (none until the user enables those datasets)."""
    reproduced = table2(collect_records(results), methods=methods) if results else None
    frame = table3(reproduced, decimals=decimals, paper_names=paper_names)
    write_table(frame, markdown=markdown, csv=csv, latex=latex, decimals=decimals)


def render_dataset_summary(
    *, datasets: dict[str, PathLike], markdown: PathLike, csv: PathLike, latex: PathLike
) -> None:
    """Sizes, classes and input shape of every prepared dataset."""
    summary = dataset_summary({name: describe_dataset(load_dataset(path)) for name, path in datasets.items()})
    write_table(summary, markdown=markdown, csv=csv, latex=latex, decimals=0)


def render_noise_table(
    *, labels: list[PathLike], datasets: list[str], markdown: PathLike, csv: PathLike, latex: PathLike, decimals: int
) -> None:
    """The noise table from the noisy-label tables of the main settings with injected noise (``datasets``: the
    dataset of each file): the share of wrong labels and co-teaching's nominal and actual forget rates per dataset
    and setting (:func:`enkcvs.report.tables.noise_table`); CSV with the sources, Markdown and LaTeX readable
    (:func:`enkcvs.report.tables.format_noise_table`)."""
    table = noise_table(noise_records(labels=labels, datasets=datasets))
    write_table(
        table,
        markdown=markdown,
        csv=csv,
        latex=latex,
        decimals=decimals,
        readable=format_noise_table(table, decimals=decimals),
        caption=NOISE_CAPTION,
        group_rows=True,
    )


def render_sensitivity_figure(
    *,
    metrics: list[PathLike],
    results: list[PathLike],
    selection: dict[str, int],
    paper_name: str | None,
    png: PathLike,
    pdf: PathLike,
    dpi: int,
) -> None:
    """Figure 1 (:func:`enkcvs.report.figures.draw_sensitivity`) from the sensitivity selections and their SS-only final
    models, with the paper's Table 1 numbers of ``paper_name`` (the study's dataset as the paper names it, or None)."""
    records = collect_records(metrics)
    published = None if paper_name is None else published_table1(noises=records["noise"], paper_name=paper_name)
    sensitivity_figure(
        sensitivity_table(records, collect_records(results)),
        K=selection["K"],
        M=selection["M"],
        t=selection["t"],
        published=published,
        png=png,
        pdf=pdf,
        dpi=dpi,
    )


RESOURCES_CAPTION = (
    "Wall time (s) and peak resident memory (MB) of the training jobs behind the report, per rule, from Snakemake's "
    "benchmark files (results/benchmarks/), on the machine that ran them."
)


def render_resource_usage(
    *, benchmarks: dict[str, list[PathLike]], markdown: PathLike, csv: PathLike, latex: PathLike, decimals: int
) -> None:
    """:func:`enkcvs.report.tables.resource_table` as Markdown (with a caption), CSV and LaTeX."""
    write_table(
        resource_table(benchmarks),
        markdown=markdown,
        csv=csv,
        latex=latex,
        decimals=decimals,
        caption=RESOURCES_CAPTION,
    )


def render_theory_figure(
    *, metrics: list[PathLike], png: PathLike, pdf: PathLike, markdown: PathLike, csv: PathLike, dpi: int, decimals: int
) -> None:
    """Theory-vs-measured figure and table (:func:`enkcvs.report.tables.theory_table`; Markdown and CSV) from every
    selection metrics JSON."""
    records = collect_records(metrics)
    theory_figure(records, png=png, pdf=pdf, dpi=dpi)
    table = theory_table(records)
    with atomic_path(csv) as tmp:
        table.to_csv(tmp, index=False)
    with atomic_path(markdown) as tmp:
        tmp.write_text(table.drop(columns="sources").to_markdown(index=False, floatfmt=f".{decimals}f") + "\n")


def render_confident_learning(
    *,
    tables: list[PathLike],
    markdown: PathLike,
    csv: PathLike,
    latex: PathLike,
    png: PathLike,
    pdf: PathLike,
    decimals: int,
    dpi: int,
) -> None:
    """The comparison table (precision and recall in %; Markdown, CSV, LaTeX) and figure from every setting's
    comparison file."""
    table = confident_learning_table([read_table(path)[0] for path in tables])
    percent = table.assign(**{score: table[score] * 100.0 for score in CONFIDENT_LEARNING_SCORES})
    write_table(percent, markdown=markdown, csv=csv, latex=latex, decimals=decimals)
    comparison_figure(table, png=png, pdf=pdf, dpi=dpi)


def render_ranking(
    *, tables: list[PathLike], markdown: PathLike, csv: PathLike, latex: PathLike, decimals: int
) -> None:
    """The ranking comparison (scores in %; Markdown, CSV, LaTeX) from every setting's ranking file."""
    table = ranking_table([read_table(path)[0] for path in tables])
    write_table(
        table.assign(**{score: table[score] * 100.0 for score in [*RANKING_SCORES, *RANKING_GAPS]}),
        markdown=markdown,
        csv=csv,
        latex=latex,
        decimals=decimals,
    )


def render_review_sheet(
    *,
    dataset: PathLike,
    table: PathLike,
    top: int,
    png: PathLike | None = None,
    pdf: PathLike | None = None,
    dpi: int = 150,
    markdown: PathLike | None = None,
    group: str | None = None,
) -> None:
    """The review sheet of a dataset's label-issue ranking, its ``top`` samples most likely mislabelled first: a
    figure of the images (:func:`enkcvs.labelissues.review.draw_review_sheet`, in memory or read from their files) as
    ``png`` and ``pdf``, or a Markdown ``markdown`` of the texts (:func:`enkcvs.labelissues.review.text_sheet`) or of a
    table's feature rows under their names (:func:`enkcvs.labelissues.review.table_sheet`). ``group``: only the samples
    whose id's first word it is (:attr:`enkcvs.data.sources.Source.id_groups`), each shown with its rank among all."""
    from enkcvs.labelissues.review import table_sheet, text_sheet, write_markdown, write_review_sheet

    data = load_dataset(dataset)
    issues, meta = read_table(table)
    caption = ranking_caption(meta)
    sheet = {"issues": issues, "caption": caption, "top": top, "id_column": data.id_column or None}
    if markdown is None:
        files = data.modality == "image_files"
        if files and not data.id_column:  # an image folder's files are named by their paths in the table
            sheet["id_column"] = "path"
        if group is not None:
            sheet["subset"] = issues[data.id_column].astype(str).str.startswith(f"{group} ").to_numpy()
            sheet["caption"] = f"{caption}; its {group} samples only, ranked among all {len(data.y_train):,}"
        write_review_sheet(
            images=data.x_train,
            layout=None if files else "NCHW",
            root=data.image_root if files else "",
            png=png,
            pdf=pdf,
            dpi=dpi,
            **sheet,
        )
    elif data.modality == "text":
        write_markdown(text_sheet(texts=data.x_train, **sheet), path=markdown)
    else:  # a table's rows are stored as (N, 1, 1, F) images
        write_markdown(
            table_sheet(
                features=data.x_train.reshape(len(data.x_train), -1), feature_names=data.feature_names, **sheet
            ),
            path=markdown,
        )


def ranking_caption(meta: dict) -> str:
    """Which ranking a label-issue table holds, from its provenance: dataset, noise setting, the seed or the seeds
    merged, and the selection (K, M, t)."""
    seeds, K, M, t = meta.get("seeds", [meta.get("seed")]), meta.get("K"), meta.get("M"), meta.get("threshold")
    ranking = f"{meta.get('dataset')}, noise {meta.get('noise')}: E-NKCVS ranking"
    if len(seeds) == 1:
        return f"{ranking} of seed {seeds[0]} (K = {K}, M = {M}, t = {t})"
    return (
        f"{ranking} merged over seeds {', '.join(map(str, seeds))} (K = {K}; M = {M} iterations per seed, "
        f"{len(seeds) * M} in all; t = {t} per seed)"
    )


MATCHED_CAPTION = (
    "E-NKCVS minus each other method of the run, in points of clean test accuracy (last epoch, as in Table 2), paired "
    "by seed: at each seed both trained on the same noisy labels. Per row: the seeds paired, both means over them, the "
    "mean ± std of the paired differences, its {confidence:g} % paired t interval and the paired t-test's p, "
    "Holm-adjusted over the table's rows (one family); 'above' or 'below' where that p < {significance:g}. Matched "
    "on what E-NKCVS gets (not in the paper): CE + mixup and SL + mixup mix as E-NKCVS's final model does; the INCV "
    "selection (Chen et al. 2019) trains its final model as SS only does; the CE + mixup ensemble averages the softmax "
    "probabilities of M (K - 1) + 1 models, E-NKCVS's fold and final trainings counted in full-data trainings."
)


def render_matched(
    *, results: list[PathLike], methods: list[str], markdown: PathLike, csv: PathLike, latex: PathLike, decimals: int
) -> None:
    """E-NKCVS against each of ``methods``, paired by seed (:func:`enkcvs.report.matched.paired_leads`), from the
    final-model JSONs of Table 2: CSV with full precision and sources, Markdown and LaTeX as
    :func:`enkcvs.report.matched.format_leads` shows it."""
    # here, not at the top: the paired t-tests import scipy, which no other report rule needs
    from enkcvs.report.matched import format_leads, paired_leads
    from enkcvs.report.statistics import CONFIDENCE, SIGNIFICANCE

    table = paired_leads(collect_records(results), methods=methods)
    write_table(
        table,
        markdown=markdown,
        csv=csv,
        latex=latex,
        decimals=decimals,
        readable=format_leads(table, decimals=decimals),
        caption=MATCHED_CAPTION.format(confidence=100 * CONFIDENCE, significance=SIGNIFICANCE),
        group_rows=True,
    )
