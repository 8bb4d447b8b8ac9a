"""bench/codec_record.py: each row of the record comes whole from its median round."""
import importlib.util
import pathlib

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "bench" / "codec_record.py"


def load():
    spec = importlib.util.spec_from_file_location("codec_record", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def round_md(path, copy, rows):
    lines = ["# gutf8 device codec benchmark", "", "- GPU: Test GPU", "- commit: x", "- date: d",
             "- input: 256 MiB per case, median of 11 runs",
             f"- device copy rate (cudaMemcpy D2D, read+write): {copy} GB/s", "",
             "| input | invalid | op | ms | GB/s | roofline GB/s | % of roofline |",
             "|---|---:|---|---:|---:|---:|---:|"]
    lines += [f"| {i} | 0.0% | {op} | {ms} | {gbs} | {roof} | {pct}% |" for i, op, ms, gbs, roof, pct in rows]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 0, 1), (1, 2, 0)])
def test_median_round_per_row(tmp_path, capsys, order):
    # decode's median is round b (its own roofline 1001), validate's round c.
    rounds = [
        ("a", 2990.0, [("cjk", "decode_fused", 0.300, 900.5, 1000, 90), ("cjk", "validate", 0.12, 2210.0, 2990, 74)]),
        ("b", 2995.5, [("cjk", "decode_fused", 0.290, 910.0, 1001, 91), ("cjk", "validate", 0.12, 2190.0, 2995, 73)]),
        ("c", 2985.8, [("cjk", "decode_fused", 0.280, 950.0, 1002, 95), ("cjk", "validate", 0.12, 2200.0, 2985, 74)]),
    ]
    paths = [round_md(tmp_path / f"{rounds[k][0]}.md", rounds[k][1], rounds[k][2]) for k in order]
    load().main(["--commit", "abc1234", *paths])
    out = capsys.readouterr().out
    assert "- commit: abc1234" in out
    assert "2985.8-2995.5 GB/s" in out
    assert "- input: 256 MiB per case, median of 11 runs a round; per row the round with the median GB/s of 3" in out
    assert "| cjk | 0.0% | decode_fused | 0.29 | 910.0 | 1001 | 91% |" in out
    assert "| cjk | 0.0% | validate | 0.12 | 2200.0 | 2985 | 74% |" in out


def test_even_rounds_take_the_lower_middle(tmp_path, capsys):
    a = round_md(tmp_path / "a.md", 3000.0, [("ascii", "decode_fused", 0.5, 560.0, 600, 93)])
    b = round_md(tmp_path / "b.md", 3000.0, [("ascii", "decode_fused", 0.5, 550.0, 601, 92)])
    load().main(["--commit", "c", a, b])
    assert "| ascii | 0.0% | decode_fused | 0.5 | 550.0 | 601 | 92% |" in capsys.readouterr().out
