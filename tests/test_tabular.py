"""Tables written to disk (enkcvs.report.tabular): the paper's grouped LaTeX layout and Markdown with its caption."""

import pandas as pd

from enkcvs.report.tabular import latex_tabular, write_table


def _grouped() -> pd.DataFrame:
    columns = pd.MultiIndex.from_tuples(
        [
            ("", "dataset"),
            ("", "method"),
            ("symmetric", "0.2"),
            ("asymmetric", "0.4"),
            ("asymmetric", "0.4 paper"),
            ("asymmetric", "0.4 Δ"),
        ]
    )
    rows = [
        ["mnist5k (MNIST)", "CE", "90.00 ± 1.00", "80.00 ± 2.00", "81.1 ± 0.5", "-1.10"],
        ["mnist5k (MNIST)", "E-NKCVS", "91.00 ± 1.00", "99.00 ± 0.10", "98.4 ± 0.2", "+0.60"],
        ["digits_small", "CE", "70.00 ± 1.00", "", "—", "—"],
    ]
    return pd.DataFrame(rows, columns=columns)


def test_latex_tabular_groups_columns_and_rows_like_the_paper():
    lines = latex_tabular(_grouped(), decimals=2, group_rows=True).splitlines()
    assert lines[:4] == [
        r"\begin{tabular}{llllll}",
        r"\toprule",
        r"\multicolumn{2}{c}{} & symmetric & \multicolumn{3}{c}{asymmetric} \\",
        r"\cmidrule(lr){3-3} \cmidrule(lr){4-6}",
    ]
    body = lines[lines.index(r"\midrule") + 1 : lines.index(r"\bottomrule")]
    assert body == [
        r"mnist5k (MNIST) & CE & 90.00 $\pm$ 1.00 & 80.00 $\pm$ 2.00 & 81.1 $\pm$ 0.5 & -1.10 \\",
        r" & E-NKCVS & 91.00 $\pm$ 1.00 & 99.00 $\pm$ 0.10 & 98.4 $\pm$ 0.2 & +0.60 \\",  # dataset named once
        r"\midrule",  # between the dataset blocks
        r"digits\_small & CE & 70.00 $\pm$ 1.00 &  & --- & --- \\",
    ]
    assert r"0.4 $\Delta$" in lines[4]


def test_write_table_keeps_formatted_cells_and_flattens_grouped_headers(tmp_path):
    frame = _grouped()
    write_table(
        frame.droplevel(0, axis=1),
        markdown=tmp_path / "t.md",
        csv=tmp_path / "t.csv",
        latex=tmp_path / "t.tex",
        decimals=2,
        readable=frame,
        caption="Table X: a caption.",
        group_rows=True,
    )
    markdown = (tmp_path / "t.md").read_text()
    header = [cell.strip() for cell in markdown.splitlines()[0].split("|")[1:-1]]
    assert header == [
        "dataset",
        "method",
        "symmetric 0.2",
        "asymmetric 0.4",
        "asymmetric 0.4 paper",
        "asymmetric 0.4 Δ",
    ]
    assert "+0.60" in markdown and "-1.10" in markdown  # text, not re-parsed as numbers
    assert markdown.endswith("\n\nTable X: a caption.\n")
    latex = (tmp_path / "t.tex").read_text()
    assert latex.startswith("% needs \\usepackage{booktabs}\n% Table X: a caption.\n\\begin{tabular}")
