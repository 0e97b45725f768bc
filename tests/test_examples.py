"""The README's demo runs (a smoke test of the public API)."""
import pathlib
import runpy


def test_tour_runs(capsys):
    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "tour.py"
    runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out
    assert "same draws after reseeding: True" in out and "convolution output shape: (2, 4, 6, 6)" in out
