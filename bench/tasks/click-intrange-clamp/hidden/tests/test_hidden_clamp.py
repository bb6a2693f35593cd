import click
from click.testing import CliRunner


def test_clamp_above_the_range_gives_the_maximum():
    assert click.IntRange(0, 10, clamp=True).convert(15, None, None) == 10
    assert click.IntRange(0, 10, max_open=True, clamp=True).convert(15, None, None) == 9
    assert click.IntRange(max=3, clamp=True).convert(7, None, None) == 3
    assert click.FloatRange(0.5, 2.5, clamp=True).convert(9, None, None) == 2.5


def test_clamp_below_and_inside_unchanged():
    assert click.IntRange(0, 10, clamp=True).convert(-4, None, None) == 0
    assert click.IntRange(0, 10, clamp=True).convert(4, None, None) == 4


def test_an_option_with_a_clamped_range():
    @click.command()
    @click.option("--workers", type=click.IntRange(1, 8, clamp=True), default=1)
    def cli(workers):
        click.echo(workers)

    assert CliRunner().invoke(cli, ["--workers", "32"]).output == "8\n"
