"""Views of recorded runs: the text of the pages' generated blocks, computed from a run's CSV tables (methods,
settings, ladder rungs are read from the rows, so a run with other methods or rungs renders without a change here).

:data:`VIEWS` render one run (``<run>/<view>``), :data:`PAIR_VIEWS` set a run against another
(``<run>/<view>:<other run>``); :mod:`enkcvs.pages` puts them into the pages. Recording runs and their provenance is
:mod:`enkcvs.recorded`'s.
"""

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from enkcvs.comparison import method_rank
from enkcvs.io import PathLike
from enkcvs.issue_views import label_issues
from enkcvs.machine import CPU_FLAGS
from enkcvs.methods import METHOD_TITLES, RUNG_NAMES
from enkcvs.paper import published_results


#: Where recorded runs live, relative to the repository root: the runs the pages cite as results (and as evidence of
#: reproducibility), then one-off speed comparisons. A run's name is unique over both.
RUN_HOMES = ("results/recorded", "benchmarks/results/runs")

#: The columns that name a setting in a run's tables.
SETTING = ["dataset", "noise_kind", "noise_rate"]
def _location(run: Path) -> str:
    """Where a run lives, as the pages name it: its home (:data:`RUN_HOMES`) and name."""
    folder = run.parent.as_posix()
    home = next((home for home in RUN_HOMES if folder == home or folder.endswith("/" + home)), run.parent.name)
    return f"{home}/{run.name}"


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min {seconds} s"


def run_line(run: Path) -> str:
    """One sentence naming a recorded run: when, on what, how long, from which commit; then, for a run carried
    between machines (:mod:`enkcvs.carry`), which machine had trained how much at each save; then one per dataset
    its source checked (:func:`enkcvs.recorded.data_provenance`)."""
    meta = json.loads((run / "provenance.json").read_text())
    host = meta["machine"]
    flags = ", ".join(host["cpu_flags"]) or "none of " + "/".join(CPU_FLAGS)
    commit = meta["git"].get("commit", "unknown")[:7] + (" (dirty)" if meta["git"].get("dirty") else "")
    jobs = f"{meta['jobs']} jobs in " if meta.get("jobs") else ""
    parts = len(meta.get("sittings") or [])
    # a run given targets to build first invokes Snakemake once per group and once for the rest, in one sitting
    invocations = len(meta.get("first") or []) + 1
    over = (f" (over {parts} sittings, the run killed and resumed)" if parts > invocations else
            f" (in {parts} Snakemake invocations: the targets asked for first, then the rest)" if parts > 1 else "")
    command = meta.get("command") or []
    asked = command[command.index("--cores") + 1] if "--cores" in command[:-1] else "all"
    cores = f"{host['cores']} cores" if asked == "all" else f"{asked} of the {host['cores']} cores"
    limits = meta.get("instruction_set_limits") or {}
    if limits:
        flags += "; kernels limited by " + ", ".join(f"{key}={value}" for key, value in sorted(limits.items()))
    saves = meta.get("carried") or []
    carried = (" Carried between machines: " + "; ".join(
        f"{save['training_jobs']} training jobs done when saved {save['saved']} on an {save['machine']['cpu']} "
        f"({', '.join(save['machine']['cpu_flags'])}), commit {save['git'].get('commit', 'unknown')[:7]}"
        for save in saves) + ".") if saves else ""
    checked = "".join(
        f" Dataset `{name}` (source `{data['source']}`) checked against {data['check']['check']} it trained on: "
        + ("passed." if data["check"]["passed"] else f"FAILED ({'; '.join(data['check']['problems'])}).")
        for name, data in (meta.get("data") or {}).items() if "check" in data
    )
    return (
        f"Run `{meta['name']}` (`{meta['configfile']}`), recorded {meta['recorded']}: {jobs}"
        f"{_duration(meta['wall_seconds'])}{over} of `snakemake` on {cores} of an {host['cpu']} "
        f"({flags}), torch {meta['versions'].get('torch', '?')}, commit {commit}; "
        f"files in `{_location(run)}/`.{carried}{checked}\n"
    )


def _ranking(methods: pd.Series, values: pd.Series) -> str:
    """Methods from the best to the worst value, ``=`` between equal values (the paper prints one decimal)."""
    pairs = sorted(zip(values, methods), key=lambda pair: -pair[0])
    text = f"{METHOD_TITLES.get(pairs[0][1], pairs[0][1])} {pairs[0][0]:.1f}"
    for (before, _), (value, method) in zip(pairs, pairs[1:]):
        text += f" {'=' if value == before else '>'} {METHOD_TITLES.get(method, method)} {value:.1f}"
    return text


def _ordering(table: pd.DataFrame) -> tuple[str, list[str]]:
    """The verdict sentence of :func:`table2_ordering` and its line per setting."""
    lines, first, claimed, kept = [], 0, 0, 0
    for (dataset, kind, rate), rows in table.groupby(SETTING, sort=False):
        line = f"- {dataset} {kind} {rate:g}: {_ranking(rows['method'], rows['mean'])}"
        published = rows["published"] if "published" in rows else pd.Series(float("nan"), index=rows.index)
        papers = bool(published.notna().any())
        # the paper's ordering is among its own methods: rows it does not print (e.g. CE + mixup) are listed only
        compared = rows[published.notna()] if papers else rows
        ours = bool(compared.loc[compared["method"] == "enkcvs", "mean"].max() == compared["mean"].max())
        if papers:
            line += f" (paper: {_ranking(compared['method'], compared['published'])})"
        paper_first = not papers or bool(published[rows["method"] == "enkcvs"].max() == published.max())
        first += ours
        claimed += paper_first
        kept += ours and paper_first
        lines.append(line)
    verdict = "holds" if kept == claimed else "does not hold" if kept == 0 else "holds in part"
    return (f"E-NKCVS has the best mean of the paper's methods in {first} of {_settings(len(lines))} (of all methods "
            "where a setting has no paper cell). The paper has it first (ties included) "
            f"in {claimed} of them, and here it is first in {kept} of those: the paper's ordering {verdict} "
            f"here."), lines


def table2_ordering(run: Path) -> str:
    """Per setting of the run's Table 2: the methods from best to worst mean, beside the paper's own ordering where
    the setting has a paper cell for every method, and whether E-NKCVS comes first where the paper has it first
    (ties included). The paper does not have it first everywhere: at noise 0 CE ties or beats it (TREC: CE 96.5,
    E-NKCVS 96.4). A setting without paper cells counts as one where the paper's claim (E-NKCVS first) applies."""
    table = pd.read_csv(run / "table2.csv")
    summary, lines = _ordering(table[table["runs"] > 0])
    return summary + "\n\n" + "\n".join(lines) + "\n"


def _cells_by_setting_and_method(table: pd.DataFrame) -> pd.DataFrame:
    """The ``cell`` column of a Table 2 frame as a setting x method frame: the settings (column ``setting``) in the
    table's order, the methods in the paper's (:func:`enkcvs.comparison.method_rank`) under their titles."""
    frame = table.pivot(index="setting", columns="method", values="cell")
    rank = method_rank(table)
    return frame.loc[table["setting"].unique(), sorted(frame.columns, key=rank.get)].rename(columns=METHOD_TITLES)


def paper_beside(run: Path) -> str:
    """The run's Table 2 beside the paper's, compact (view ``paper-beside``): a row per setting with a paper cell, a
    column per method (the paper's order), each cell the run's mean with the paper's in parentheses, the best mean of
    the row here in bold; then :func:`table2_ordering`'s verdict."""
    table = pd.read_csv(run / "table2.csv")
    table = table[(table["runs"] > 0) & table["published"].notna()].copy()
    if table.empty:
        return f"`{run.name}` has no Table 2 cell beside a paper cell.\n"
    table["setting"] = _setting_labels(table)
    best = table.groupby("setting")["mean"].transform("max")
    table["cell"] = [f"**{mean:.1f}** ({paper:.1f})" if mean == top else f"{mean:.1f} ({paper:.1f})"
                     for mean, paper, top in zip(table["mean"], table["published"], best)]
    frame = _cells_by_setting_and_method(table)
    low, high = int(table["runs"].min()), int(table["runs"].max())
    seeds = (f"{low}" if low == high else f"{low}-{high}") + (" seed" if high == 1 else " seeds")
    papers = ", ".join(dict.fromkeys(table["paper_dataset"]))
    summary, _ = _ordering(table)
    return (f"Test accuracy (%) on the clean test set: run `{run.name}` ({seeds} per cell) beside "
            f"the paper's Table 2 ({papers}, mean of 5 runs) in parentheses; bold: the best mean of the row here. "
            f"{summary}\n\n" + frame.reset_index().to_markdown(index=False) + "\n")


def table1_agreement(run: Path) -> str:
    """Whether the run's Table 1 reads like the paper's (high precision) and how close the corrected Theorem 1
    comes to the measured precision and recall."""
    table = pd.read_csv(run / "table1.csv")
    recall_miss = table["theorem1_recall"] - table["recall"]
    misses = (table["theorem1_precision"] - table["precision"]).abs().gt(2) | recall_miss.abs().gt(2)
    if len(table) == 1:
        agreement = "misses one of them by more than 2 points" if misses.any() else "is within 2 points of both"
    else:
        agreement = f"is within 2 points of both in {int((~misses).sum())} of them"
    return (
        f"Selection precision is {_span(table['precision'])} % and recall {_span(table['recall'])} % over "
        f"{_settings(len(table))}; the corrected Theorem 1 {agreement} (Theorem 1 minus measured recall: "
        f"{_span(recall_miss, spec='+.1f', joiner=' to ')} points).\n"
    )


def _falls(values: pd.Series) -> bool:
    return bool((values.diff().dropna() <= 0).all())


def table1_trend(run: Path) -> str:
    """Whether the run's selection follows the paper's Table 1 (CIFAR-10 only): precision and recall falling as the
    symmetric noise rate rises, per dataset of the run with at least two symmetric rates."""
    paper = published_results()
    paper = paper[(paper["table"] == 1) & (paper["noise_kind"] == "sym")]
    rates = sorted(paper["noise_rate"].unique())
    ends = {metric: paper[paper["metric"] == metric].set_index("noise_rate")["value"]
            for metric in ("precision", "recall")}
    lines = [f"The paper's Table 1 (CIFAR-10, K = 10, M = 5, t = 2): from symmetric noise {rates[0]:g} to "
             f"{rates[-1]:g}, precision falls from {ends['precision'][rates[0]]:.2f} to "
             f"{ends['precision'][rates[-1]]:.2f} % and recall from {ends['recall'][rates[0]]:.2f} to "
             f"{ends['recall'][rates[-1]]:.2f} %."]
    table = pd.read_csv(run / "table1.csv")
    for dataset, rows in table[table["noise_kind"] == "sym"].groupby("dataset", sort=False):
        rows = rows.sort_values("noise_rate")
        if len(rows) < 2:
            continue
        falls = [metric for metric in ("precision", "recall") if _falls(rows[metric])]
        verdict = ("the paper's trend holds" if len(falls) == 2 else f"only {falls[0]} falls throughout" if falls
                   else "neither falls throughout")
        lines.append(
            f"- {dataset} (K = {rows['K'].iloc[0]}, M = {rows['M'].iloc[0]}, t = {rows['t'].iloc[0]}), symmetric "
            f"{' / '.join(f'{rate:g}' for rate in rows['noise_rate'])}: precision "
            f"{' / '.join(f'{value:.2f}' for value in rows['precision'])}, recall "
            f"{' / '.join(f'{value:.2f}' for value in rows['recall'])}: {verdict}.")
    if len(lines) == 1:
        lines.append("- This run has no dataset with two or more symmetric noise rates.")
    return lines[0] + "\n\n" + "\n".join(lines[1:]) + "\n"


def _setting_labels(frame: pd.DataFrame) -> list[str]:
    """One label per row for a Table 2 setting: ``mnist5k asym 0.4``."""
    return [f"{d} {k} {r:g}" for d, k, r in zip(frame["dataset"], frame["noise_kind"], frame["noise_rate"])]


#: What a step between two rungs of the ablation ladder measures, where it has a name: ``(later, earlier)``.
LADDER_STEPS = {
    ("ce", "ce_true"): "noise",
    ("ce_mixup", "ce"): "mixup",
    ("cs_only", "ce"): "a perfect selection",
    ("cs_only", "ce_mixup"): "a perfect selection",
    ("css_only", "cs_only"): "SS's missed clean samples",
    ("ss_only", "css_only"): "SS's wrong labels",
    ("ss_pseudo", "ss_only"): "pseudo labels",
    ("ss_pseudo_weighted", "ss_pseudo"): "the full loss's normalisation and gamma",
    ("enkcvs", "ss_pseudo_weighted"): "beta",
    ("enkcvs", "ss_pseudo"): "beta and gamma",
}


def _step_title(later: str, earlier: str) -> str:
    name = LADDER_STEPS.get((later, earlier))
    difference = " - ".join(RUNG_NAMES.get(rung, rung) for rung in (later, earlier))
    return f"{name} ({difference})" if name else difference


def ladder_steps(run: Path) -> str:
    """The ablation ladder as steps: how many points each ingredient adds (or loses), per setting: one step between
    each two neighbouring rungs of the run's ladder (its ``*_mean`` columns in order), then the last rung against the
    first."""
    table = pd.read_csv(run / "ablation.csv")
    rungs = [column.removesuffix("_mean") for column in table.columns if column.endswith("_mean")]
    steps = {_step_title(later, earlier): (later, earlier) for earlier, later in zip(rungs, rungs[1:])}
    steps[_step_title(rungs[-1], rungs[0])] = (rungs[-1], rungs[0])
    frame = pd.DataFrame({"setting": _setting_labels(table)})
    for title, (a, b) in steps.items():
        frame[title] = [f"{x:+.2f}" for x in table[f"{a}_mean"] - table[f"{b}_mean"]]
    return frame.to_markdown(index=False) + "\n"


def _training_samples(run: Path) -> dict[str, int]:
    """Per dataset of a recorded run, its training samples (``datasets.csv``; none where the run has no such file)."""
    path = run / "datasets.csv"
    return pd.read_csv(path).set_index("dataset")["train"].to_dict() if path.is_file() else {}


def ladder_beside(first: Path, second: Path) -> str:
    """The ablation ladders of two recorded runs side by side on the settings they share (view
    ``<second>/ladder-beside:<first>``): each run's training samples, fold models, selection, the two losses inside
    SS, the oracle and E-NKCVS, and the methods of their Table 2 that are no rung of the ladder (the baselines). A
    setting is shared when the noise matches and the datasets are the same or stand for the same paper dataset (the
    default's 4,000-image MNIST sample beside the full MNIST: what the data size alone changes)."""
    keys = ["compared", "noise_kind", "noise_rate"]
    rows = []
    ladders = {run: pd.read_csv(run / "ablation.csv") for run in (first, second)}
    rungs = {column.removesuffix("_mean") for ladder in ladders.values() for column in ladder
             if column.endswith("_mean")}
    both = pd.concat([pd.read_csv(run / "table2.csv") for run in (first, second)])
    rank = method_rank(both)
    baselines = sorted((m for m in rank if m not in rungs), key=rank.get)
    for order, run in enumerate((first, second)):
        ladder, results = ladders[run], pd.read_csv(run / "table2.csv")
        papers = (results.dropna(subset=["paper_dataset"]).set_index("dataset")["paper_dataset"].to_dict()
                  if "paper_dataset" in results else {})
        samples = _training_samples(run)
        config = _recorded_config(run)
        for row in ladder.itertuples():
            method_means = results[(results["dataset"] == row.dataset) & (results["noise_kind"] == row.noise_kind)
                                   & (results["noise_rate"] == row.noise_rate)].set_index("method")["mean"]
            rows.append({
                "compared": papers.get(row.dataset, row.dataset), "order": order,
                "dataset": row.dataset, "noise_kind": row.noise_kind, "noise_rate": row.noise_rate,
                "run": run.name, "model": config["datasets"][row.dataset]["recipe"]["model"],
                "training samples": samples.get(row.dataset, "n/a"),
                "seeds": row.seeds, "out-of-fold acc. %": row.oof_accuracy,
                "precision / recall %": f"{row.precision:.1f} / {row.recall:.1f}",
                "SS's missed clean samples": row.css_only_mean - row.cs_only_mean,
                "SS's wrong labels": row.ss_only_mean - row.css_only_mean,
                "CS only": row.cs_only_mean, "E-NKCVS": row.enkcvs_mean,
                **{METHOD_TITLES.get(m, m): method_means.get(m, np.nan) for m in baselines},
            })
    frame = pd.DataFrame(rows)
    frame = frame[frame.groupby(keys)["run"].transform("nunique") == 2]
    if frame.empty:
        return f"`{second.name}` and `{first.name}` share no setting of the ablation ladder.\n"
    frame = frame.sort_values([*keys, "order"], kind="stable")
    frame.insert(0, "setting", _setting_labels(frame))
    frame = frame.drop(columns=[*keys, "order", "dataset"])
    return frame.to_markdown(index=False, floatfmt=".1f") + "\n"


def table2_beside(first: Path, second: Path) -> str:
    """Table 2 of two recorded runs side by side (view ``<second>/table2-beside:<first>``): a row per setting both
    ran, a column per method both trained (the paper's order), each cell the second run's mean, the first's in
    parentheses and the change; then per method the largest change, to tell a changed method from the spread of the
    unchanged ones."""
    keys = [*SETTING, "method"]
    tables = [pd.read_csv(run / "table2.csv").query("runs > 0").set_index(keys)["mean"] for run in (first, second)]
    both = pd.concat(tables, axis=1, keys=["first", "second"], join="inner").reset_index()
    if both.empty:
        return f"`{second.name}` and `{first.name}` share no Table 2 cell.\n"
    both["change"] = both["second"] - both["first"]
    both["setting"] = _setting_labels(both)
    both["cell"] = [f"{new:.1f} ({old:.1f}, {change:+.1f})" for new, old, change in
                    zip(both["second"], both["first"], both["change"])]
    rank = method_rank(both)
    frame = _cells_by_setting_and_method(both)
    largest = both.loc[both["change"].abs().groupby(both["method"]).idxmax()]
    changes = "; ".join(f"{METHOD_TITLES.get(row.method, row.method)} {row.change:+.1f} ({row.setting})"
                        for row in largest.sort_values("method", key=lambda m: m.map(rank)).itertuples())
    return (f"Test accuracy (%) of run `{second.name}`, in parentheses `{first.name}`'s and the change. Largest "
            f"change per method: {changes}.\n\n" + frame.reset_index().to_markdown(index=False) + "\n")


def _recorded_config(run: Path) -> dict:
    """The config a recorded run ran with, as its provenance keeps it."""
    return yaml.safe_load(json.loads((run / "provenance.json").read_text())["config"])


def _coteaching_cells(run: Path, table: pd.DataFrame) -> pd.DataFrame:
    """The Co-teaching cells of the run's Table 2 frame ``table`` with the paper's, the run's ``forget_rate`` choice
    (from its recorded config) and the share of each batch that choice forgot (%, from its noise table)."""
    config = _recorded_config(run)
    frame = table.query("method == 'coteaching'").merge(pd.read_csv(run / "noise.csv"), on=SETTING, how="left")
    # a config that leaves it unset trained with the schema's default of its commit, which the record does not keep
    frame["choice"] = [str(((config["datasets"][name].get("baselines") or {}).get("coteaching") or {})
                           .get("forget_rate", "unset")) for name in frame["dataset"]]
    frame["forgets"] = 100 * np.select([frame["choice"] == "actual", frame["choice"] == "nominal"],
                                       [frame["forget_rate_actual"], frame["forget_rate_nominal"]],
                                       pd.to_numeric(frame["choice"], errors="coerce"))
    return frame[[*SETTING, "choice", "forgets", "mean", "published"]]


def forget_rate_beside(first: Path, second: Path) -> str:
    """Co-teaching's Table 2 cells of two runs that differ in its forget rate, beside the paper's (view
    ``<second>/forget-rate:<first>``): a row per setting both ran with a paper cell, the share of each batch each run
    forgot (the nominal epsilon or the labels' measured share of wrong ones), its test accuracy, which comes nearer
    the paper's and, where either run trained it, E-NKCVS on the same labels; then how often each rate comes nearer,
    the mean distances from the paper and how often E-NKCVS is ahead of Co-teaching under each."""
    tables = [pd.read_csv(run / "table2.csv").query("runs > 0") for run in (first, second)]
    both = _coteaching_cells(first, tables[0]).merge(_coteaching_cells(second, tables[1]), on=SETTING,
                                                     suffixes=("_1", "_2")).dropna(subset=["published_1"])
    if both.empty:
        return f"`{second.name}` and `{first.name}` share no Co-teaching cell beside a paper cell.\n"
    names = {side: both[f"choice_{side}"].iloc[0] for side in ("1", "2")}
    if names["1"] == names["2"]:
        return f"`{second.name}` and `{first.name}` both trained Co-teaching with forget rate `{names['1']}`.\n"
    runs = {"1": first.name, "2": second.name}
    distance = {side: (both[f"mean_{side}"] - both["published_1"]).abs() for side in names}
    nearer = np.select([distance["2"] < distance["1"], distance["1"] < distance["2"]],
                       [names["2"], names["1"]], "tie")
    enkcvs = pd.concat(tables).query("method == 'enkcvs'").drop_duplicates(SETTING)[[*SETTING, "mean"]]
    both = both.merge(enkcvs.rename(columns={"mean": "enkcvs"}), on=SETTING, how="left")
    frame = pd.DataFrame({
        "setting": _setting_labels(both),
        "paper": both["published_1"],
        **{f"{names[side]}: forgets (%)": both[f"forgets_{side}"] for side in names},
        **{f"{names[side]}: accuracy": both[f"mean_{side}"] for side in names},
        "nearer the paper": nearer,
        "E-NKCVS": both["enkcvs"],
    }).dropna(axis=1, how="all")
    counts = "; ".join(f"`{names[side]}` (run `{runs[side]}`) in {int((nearer == names[side]).sum())}, "
                       f"{distance[side].mean():.1f} points from it on average" for side in names)
    ahead = both["enkcvs"].notna()
    leads = ("" if not ahead.any() else " E-NKCVS on the same labels is ahead of Co-teaching in " + " and ".join(
        f"{int((both.loc[ahead, 'enkcvs'] > both.loc[ahead, f'mean_{side}']).sum())} of {int(ahead.sum())} with "
        f"`{names[side]}`" for side in names) + ".")
    return (f"Co-teaching's test accuracy (%) with two forget rates beside the paper's cell, over "
            f"{_settings(len(frame))}; nearer the paper: {counts}.{leads}\n\n"
            + frame.to_markdown(index=False, floatfmt=".2f") + "\n")


def _settings(count: int) -> str:
    return "1 setting" if count == 1 else f"{count} settings"


def _span(values: pd.Series, *, spec: str = ".1f", joiner: str = "-") -> str:
    """The values' lowest and highest, formatted with ``spec``, or one of them where they read the same."""
    low, high = f"{values.min():{spec}}", f"{values.max():{spec}}"
    return low if low == high else f"{low}{joiner}{high}"


def noise_cost(run: Path) -> str:
    """What the noise costs each method, with each side's own ceiling taken out (view ``noise-cost``): here, a method's
    test accuracy minus CE's on the true labels (the ablation ladder's ceiling of this data and recipe); in the paper,
    its cell minus the paper's CE at noise 0 on that dataset. Settings with a paper cell only."""
    ceiling = pd.read_csv(run / "ablation.csv")[[*SETTING, "ce_true_mean"]]
    results = pd.read_csv(run / "table2.csv").merge(ceiling, on=SETTING)
    results = results[results["published"].notna()]
    if results.empty:
        return f"`{run.name}` has no setting with both the ablation ladder and a paper cell.\n"
    paper = published_results()
    clean = paper[(paper["table"] == 2) & (paper["noise_rate"] == 0) & (paper["method"] == "ce")]
    results["paper_ceiling"] = results["paper_dataset"].map(clean.set_index("dataset")["value"])
    results["ours"] = results["mean"] - results["ce_true_mean"]
    results["paper"] = results["published"] - results["paper_ceiling"]
    results["setting"] = _setting_labels(results)
    results["cell"] = [f"{ours:+.1f} ({paper:+.1f})" for ours, paper in zip(results["ours"], results["paper"])]
    frame = _cells_by_setting_and_method(results)
    ceilings = "; ".join(
        f"{dataset} {_span(group['ce_true_mean'])} % here, {group['paper_dataset'].iloc[0]} "
        f"{group['paper_ceiling'].iloc[0]:.1f} % in the paper"
        for dataset, group in results.groupby("dataset", sort=False))
    return ("Points each method loses to the noise: here its test accuracy minus CE's on the true labels, in "
            f"parentheses the paper's cell minus the paper's CE at noise 0 (ceilings: {ceilings}).\n\n"
            + frame.reset_index().to_markdown(index=False) + "\n")


def ranking_verdict(run: Path) -> str:
    """Per setting, E-NKCVS's label-quality AUPRC against the best cleanlab score's (mean over seeds), and where
    it is not at least as high."""
    table = pd.read_csv(run / "ranking.csv")
    rows = []
    for (dataset, noise), group in table.groupby(["dataset", "noise"], sort=False):
        scores = group.set_index("method")["auprc"]
        cleanlab = scores[scores.index.str.startswith("cleanlab")]
        rows.append({"setting": f"{dataset} {noise}", "E-NKCVS label quality": scores["E-NKCVS label quality"],
                     "votes, then P(given)": scores["E-NKCVS votes, then P(given)"],
                     "best cleanlab": cleanlab.max(), "which": cleanlab.idxmax().removeprefix("cleanlab ")})
    frame = pd.DataFrame(rows)
    frame["difference"] = frame["E-NKCVS label quality"] - frame["best cleanlab"]
    behind = frame[frame["difference"] < 0]
    summary = (f"AUPRC (%) of each ranking of the true label errors: E-NKCVS's label quality is at least as high as "
               f"the best cleanlab score in {len(frame) - len(behind)} of {len(frame)} settings")
    if not behind.empty:
        summary += (f"; behind in {', '.join(behind['setting'])} by {(-behind['difference']).max():.2f} points at "
                    "most")
    return summary + ".\n\n" + frame.to_markdown(index=False, floatfmt=".2f") + "\n"


def theory_misses(run: Path) -> str:
    """Every selection of the run where the corrected Theorem 1 misses the measured precision or recall by more than
    2 points, beside the evidence of correlated iterations (agreement and all-wrong shares, measured against their
    values under independence)."""
    table = pd.read_csv(run / "theory.csv")
    missed = table[(table["precision_gap"].abs() > 2) | (table["recall_gap"].abs() > 2)]
    if missed.empty:
        return "Theorem 1 is within 2 points of every measured precision and recall of this run.\n"
    columns = {"dataset": "dataset", "noise": "noise", "seed": "seed", "K": "K", "M": "M", "t": "t",
               "precision_gap": "precision: Theorem 1 - measured", "recall_gap": "recall: Theorem 1 - measured",
               "agreement": "agreement %", "agreement_independent": "if independent %",
               "all_wrong": "all wrong %", "all_wrong_independent": "if independent % "}
    return missed[list(columns)].rename(columns=columns).to_markdown(index=False, floatfmt=".2f") + "\n"


def run_difference(first: Path, second: Path) -> str:
    """How the tables of two recorded runs differ (view ``<second>/diff:<first>``): a summary line, the differences
    in Tables 1-2 beside the spread over seeds, then per table the differing cells and the largest difference."""
    frame = compare_runs(first, second)
    cells, differ = int(frame["cells"].sum()), int(frame["differ"].sum())
    summary = (f"`{second.name}` against `{first.name}`: {differ} of {cells} numeric table cells differ "
               f"({len(frame['table'].unique())} tables).\n")
    changed = frame[frame["differ"] > 0]
    if changed.empty:
        return summary
    # a table whose shape changed has no largest difference (NaN): it still gets its row
    order = changed["max_abs_difference"].fillna(-np.inf)
    largest = changed.loc[order.groupby(changed["table"]).idxmax()].set_index("table")
    per_table = pd.DataFrame({
        "cells": frame.groupby("table")["cells"].sum(),
        "differ": frame.groupby("table")["differ"].sum(),
        "largest difference": largest["max_abs_difference"],
        "in column": largest["column"],
    }).dropna(subset=["in column"]).reset_index()  # tables without a differing cell have no column
    return summary + _tolerance(first, second) + "\n" + per_table.to_markdown(index=False, floatfmt=".4g") + "\n"


def _tolerance(first: Path, second: Path) -> str:
    """The differences a reader of Tables 1-2 meets, beside the spread over seeds of the same Table 2 cells."""
    lines = []
    if (first / "table2.csv").exists() and (second / "table2.csv").exists():
        a, b = pd.read_csv(first / "table2.csv"), pd.read_csv(second / "table2.csv")
        if len(a) == len(b):
            shift = (a["mean"] - b["mean"]).abs()
            lines.append(f"Table 2 test accuracy: means differ by up to {shift.max():.2f} points (median "
                         f"{shift.median():.2f}); the std over seeds of the same cells is up to "
                         f"{a['std'].max():.2f} (median {a['std'].median():.2f}).")
    if (first / "table1.csv").exists() and (second / "table1.csv").exists():
        a, b = pd.read_csv(first / "table1.csv"), pd.read_csv(second / "table1.csv")
        if len(a) == len(b):
            rates = max((a[c] - b[c]).abs().max() for c in ("precision", "recall"))
            lines.append(f"Table 1 selection: precision and recall differ by up to {rates:.2f} points, "
                         f"|SS| by up to {(a['SS'] - b['SS']).abs().max():g} samples (mean over seeds).")
    return "".join(f"- {line}\n" for line in lines)


#: Tables of measurements of the run itself (job time and memory), which differ between any two runs: not results.
MEASURED_TABLES = ("resources.csv",)


def compare_runs(first: PathLike, second: PathLike) -> pd.DataFrame:
    """Every numeric column of every CSV result table two runs share (:data:`MEASURED_TABLES` left out): how many
    cells differ and by how much at most."""
    rows = []
    for path in sorted(Path(first).glob("*.csv")):
        other = Path(second) / path.name
        if not other.exists() or path.name in MEASURED_TABLES:
            continue
        a, b = pd.read_csv(path), pd.read_csv(other)
        if a.shape != b.shape:
            rows.append({"table": path.name, "column": "(shape)", "cells": a.size, "differ": a.size,
                         "max_abs_difference": np.nan})
            continue
        for column in a.select_dtypes("number"):
            x, y = a[column].to_numpy(float), b[column].to_numpy(float)
            differ = ~((x == y) | (np.isnan(x) & np.isnan(y)))
            rows.append({"table": path.name, "column": column, "cells": len(x), "differ": int(differ.sum()),
                         "max_abs_difference": float(np.nanmax(np.abs(x - y))) if differ.any() else 0.0})
    return pd.DataFrame(rows)


#: Views of a recorded run computed from its files, beside the files themselves.
VIEWS: dict[str, Callable[[Path], str]] = {
    "run": run_line,
    "table1-agreement": table1_agreement,
    "table1-trend": table1_trend,
    "table2-ordering": table2_ordering,
    "paper-beside": paper_beside,
    "ladder-steps": ladder_steps,
    "noise-cost": noise_cost,
    "theory-misses": theory_misses,
    "ranking-verdict": ranking_verdict,
    "label-issues": label_issues,
}

#: Views that set a recorded run against another: ``<run>/<view>:<other run>``.
PAIR_VIEWS: dict[str, Callable[[Path, Path], str]] = {
    "diff": run_difference,
    "ladder-beside": ladder_beside,
    "table2-beside": table2_beside,
    "forget-rate": forget_rate_beside,
}
