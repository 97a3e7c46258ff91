"""The base install is the ledger alone; a subcommand whose door's extra is missing names the
extra to install, from what pyproject.toml really declares."""
from __future__ import annotations

import re
import sys
import tomllib
from importlib.metadata import packages_distributions, requires
from pathlib import Path

import pytest

from importlib.util import find_spec

from consumers.cli import extras
from consumers.cli.extras import DISTRIBUTION, EXTRAS, MissingExtra, missing_extra, require

PROJECT = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _installs(extra: str) -> set[str]:
    """The distributions an extra names, and what those require in turn (one level down)."""
    named = {_name(r) for r in PROJECT["optional-dependencies"][extra]}
    return named | {_name(r) for d in named for r in (requires(d) or []) if "extra ==" not in r}


ROOT = Path(__file__).resolve().parents[2]


def test_the_line_names_the_project_as_pyproject_does():
    assert DISTRIBUTION == PROJECT["name"] != "agent-ledger"  # that name is another project's on PyPI
    assert MissingExtra("kafka").line("ledger serve") == \
        f"ledger serve needs Kafka support: {extras.install_command('kafka')}"


def test_installed_from_this_checkout_the_line_installs_the_extra_from_it(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert extras._installed_from() == (ROOT, True)  # make's editable install
    assert extras.install_command("kafka").endswith(" install -e '.[kafka]'")
    monkeypatch.chdir("/")
    assert extras.install_command("kafka").endswith(f" install -e '{ROOT}[kafka]'")


def test_in_a_venv_made_without_pip_the_line_is_its_uv(monkeypatch, tmp_path):
    """The README's .venv: `make` creates it without pip and puts uv in it."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "uv").touch()
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.setattr(extras, "find_spec", lambda name: None if name == "pip" else find_spec(name))
    monkeypatch.chdir(tmp_path)
    assert extras.install_command("mcp") == f"bin/uv pip install --python bin/python -e '{ROOT}[mcp]'"


def test_installed_from_an_index_the_line_names_this_distribution(monkeypatch):
    monkeypatch.setattr(extras, "_installed_from", lambda: (None, False))
    assert extras.install_command("web").endswith(f"pip install '{DISTRIBUTION}[web]'")


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_each_extra_is_declared_and_installs_the_modules_it_is_checked_by(extra):
    shipped_by = packages_distributions()
    for module in EXTRAS[extra][1]:
        assert {_name(d) for d in shipped_by[module]} & _installs(extra), f"{module} is not from [{extra}]"


def test_the_base_install_holds_none_of_the_doors_libraries():
    base = {_name(r) for r in PROJECT["dependencies"]}
    doors = {_name(r) for extra in EXTRAS for r in PROJECT["optional-dependencies"][extra]}
    assert base & doors == set()


def test_every_door_is_in_all():
    assert PROJECT["optional-dependencies"]["all"] == [f"{DISTRIBUTION}[kafka,postgres,web,mcp]"]


def test_no_package_is_listed_twice_and_the_test_tools_are_a_group_not_an_extra():
    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    lists = [PROJECT["dependencies"], *PROJECT["optional-dependencies"].values(),
             *project["dependency-groups"].values()]
    named = [_name(r) for listed in lists for r in listed if _name(r) != DISTRIBUTION]
    assert sorted(n for n in set(named) if named.count(n) > 1) == []
    assert "test" not in PROJECT["optional-dependencies"]
    assert "pytest" in {_name(r) for r in project["dependency-groups"]["test"]}


def test_a_failed_import_of_a_doors_module_maps_to_its_extra_and_any_other_to_none():
    assert missing_extra(ModuleNotFoundError(name="aiokafka.errors")).extra == "kafka"
    assert missing_extra(ModuleNotFoundError(name="psycopg_pool")).extra == "postgres"
    assert missing_extra(ModuleNotFoundError(name="no_such_module")) is None


def test_require_passes_when_installed_and_names_the_extra_when_a_module_is_gone(monkeypatch):
    require(*EXTRAS)  # make .venv/.installed installs every one

    monkeypatch.setitem(sys.modules, "prometheus_client", None)  # as if not installed
    with pytest.raises(MissingExtra) as missing:
        require("kafka", "web")
    assert missing.value.extra == "web"
