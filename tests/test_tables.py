"""The committed tables/ files equal a fresh build (`rlmcost tables --check`)."""

from pathlib import Path

from typer.testing import CliRunner

from rlmcost import tables as tb
from rlmcost.cli import app

ROOT = Path(__file__).resolve().parents[1]


def test_committed_tables_match_a_fresh_build(tmp_path):
    tb.write_all(tmp_path)
    for fresh in sorted(tmp_path.iterdir()):
        committed = ROOT / "tables" / fresh.name
        assert committed.is_file(), f"{fresh.name} not committed; run `rlmcost tables`"
        assert committed.read_text() == fresh.read_text(), f"{fresh.name} is out of date"


def test_tables_check_command_passes_on_repo_and_fails_on_stale(tmp_path):
    runner = CliRunner()
    ok = runner.invoke(app, ["tables", "--check", "--out", str(ROOT / "tables")])
    assert ok.exit_code == 0, ok.output
    tb.write_all(tmp_path)
    victim = tmp_path / "table_03.md"
    victim.write_text(victim.read_text() + "edited\n")
    stale = runner.invoke(app, ["tables", "--check", "--out", str(tmp_path)])
    assert stale.exit_code == 1
    assert "table_03.md" in stale.output


def test_every_file_starts_with_the_command(tmp_path):
    for p in tb.write_all(tmp_path):
        first = p.read_text().splitlines()[0]
        assert "rlmcost tables" in first, p.name


def test_unwritable_out_is_a_one_line_error():
    r = CliRunner().invoke(app, ["tables", "--out", "/proc/no/such/dir"])
    assert r.exit_code == 2
    assert r.output.startswith("error: cannot write tables") and "Traceback" not in r.output
