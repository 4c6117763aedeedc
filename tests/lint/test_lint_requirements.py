"""Pins read as pip reads them (tfperf.lint.requirements): only requirements, never other
strings of the project's files."""

from __future__ import annotations

import textwrap

import pytest

from tfperf.lint import requirements, target

# The issue-25 miss: a setup.py whose argparse help names an old TF, whose real pin is >=2.6.
SETUP_WITH_HELP = """\
import argparse
from setuptools import setup

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", help="tensorflow==2.3 was the last release we tested on CUDA 10")
REQUIRED = ["numpy>=1.19", "tensorflow>=2.6"]

setup(name="agent", install_requires=REQUIRED + ["gym"], extras_require={"plot": ["seaborn"]})
"""


def _project(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    module = tmp_path / "src" / "train.py"
    module.parent.mkdir(exist_ok=True)
    module.write_text("x = 1\n")
    return module


def test_a_help_string_in_setup_py_is_not_a_pin(tmp_path):
    module = _project(tmp_path, {"setup.py": SETUP_WITH_HELP})
    assert requirements.setup_py(tmp_path / "setup.py") == [
        "numpy>=1.19", "tensorflow>=2.6", "gym", "seaborn"]
    found = target.resolve(None, module)
    assert found.version == (2, 6) and "setup.py" in found.source


def test_setup_py_requirements_read_from_a_requirements_file(tmp_path):
    module = _project(tmp_path, {
        "setup.py": 'from setuptools import setup\n'
                    'setup(install_requires=open("requirements.txt").read().splitlines())\n',
        "requirements.txt": "tensorflow-gpu==1.15.0  # the CUDA 10 build\n-r extra.txt\n",
        "extra.txt": "tensorflow-addons\n"})
    assert target.resolve(None, module).version == (1, 15)


def test_a_setup_py_that_does_not_parse_pins_nothing(tmp_path):
    module = _project(tmp_path, {"setup.py": 'print "tensorflow==1.2"\n'
                                             'setup(install_requires=["tensorflow==1.2"])\n'})
    assert requirements.setup_py(tmp_path / "setup.py") == []
    assert target.project_pin(module) is None


@pytest.mark.parametrize(("files", "version"), [
    ({"pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.8"\ntensorflow = "^2.4"\n'},
     ((2, 4), (2, 21))),
    ({"pyproject.toml": '[tool.poetry.dependencies]\ntensorflow = {version = "~2.7", '
                        'optional = true}\n'}, ((2, 7), (2, 7))),
    ({"pyproject.toml": '[project]\nname = "x"\ndescription = "tensorflow==1.0 is not a pin"\n'
                        'dependencies = ["tensorflow>=2.8"]\n'}, ((2, 8), (2, 21))),
    ({"setup.cfg": "[metadata]\ndescription = tensorflow==1.0 ported\n"
                   "[options.extras_require]\ngpu =\n    tensorflow-gpu>=2.3\n"},
     ((2, 3), (2, 21))),
    ({"environment.yml": "name: env\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.7\n"
                         "  - tensorflow-gpu=1.14.0=h0d30ee6_0\n  - pip:\n      - gym\n"},
     ((1, 14), (1, 14))),
    ({"environment.yml": "dependencies:\n  - numpy\n  - pip:\n    - tensorflow==2.5.0\n"},
     ((2, 5), (2, 5))),
    ({"requirements.txt": "-r base.txt\n", "base.txt": "tensorflow>=2.2,<2.4  \\\n"
                                                       "    ; python_version < '3.9'\n"},
     ((2, 2), (2, 3))),
])
def test_each_kind_of_file_is_read_as_its_tool_reads_it(tmp_path, files, version):
    module = _project(tmp_path, files)
    found = target.resolve(None, module)
    assert (found.version, found.upper) == version


def test_a_folder_whose_requirements_name_no_tensorflow_is_not_the_project(tmp_path):
    # An example folder's own requirements (plotting tools) do not stop the search: the
    # repository's setup.py above it pins TensorFlow.
    (tmp_path / ".git").mkdir()
    (tmp_path / "setup.py").write_text('from setuptools import setup\n'
                                       'setup(install_requires=["tensorflow>=2.6"])\n')
    example = tmp_path / "examples" / "cartpole"
    example.mkdir(parents=True)
    (example / "requirements.txt").write_text("matplotlib\ngym==0.21\n")
    (example / "run.py").write_text("x = 1\n")
    assert target.resolve(None, example / "run.py").version == (2, 6)
    targets = target.FileTargets(target.TargetTF((2, 21), "installed"))
    assert targets.range(str(example / "run.py"))[0] == (2, 6)


def test_a_bare_tensorflow_requirement_names_tensorflow(tmp_path):
    # `tensorflow` alone (any release) is the project's TF: the search stops there and the
    # installed TF stands, rather than a pin found further up.
    (tmp_path / "requirements.txt").write_text("tensorflow==1.15.4\n")
    sub = tmp_path / "tf2"
    sub.mkdir()
    (sub / "requirements.txt").write_text("tensorflow\ntensorflow-datasets\n")
    (sub / "run.py").write_text("x = 1\n")
    targets = target.FileTargets(target.TargetTF((2, 21), "installed"))
    assert targets.range(str(sub / "run.py")) == ((2, 21), (2, 21))
    assert target.pin_folder(sub / "run.py") == sub.resolve()


def test_poetry_specifiers():
    assert requirements.poetry_spec("^2.4") == ">=2.4,<3"
    assert requirements.poetry_spec("^0.12.1") == ">=0.12,<0.13"
    assert requirements.poetry_spec("~2.7.1") == ">=2.7,<2.8"
    assert requirements.poetry_spec("2.4.1") == "==2.4.1"
    assert requirements.poetry_spec("*") == ""
    assert requirements.poetry_spec(">=2.1,<3") == ">=2.1,<3"


CONDA_LIST = ("# This file may be used to create an environment using:\n"
              "# $ conda create --name <env> --file <this file>\n# platform: osx-64\n"
              "absl-py=0.9.0=pypi_0\nkeras-applications=1.0.8=pypi_0\n"
              "tensorflow=2.1.0=pypi_0\ntensorflow-probability=0.9.0=pypi_0\n")


@pytest.mark.parametrize("name", ["mytf2env.txt", "conda_env.txt", "spec-file.txt"])
def test_a_conda_package_list_pins_the_project(tmp_path, name):
    # `conda list --export > mytf2env.txt` (anita-hu/TF2-RL, precision round 2): conda
    # reads it back with `conda create --file`; it names the environment's TF, 2.1.
    module = _project(tmp_path, {name: CONDA_LIST})
    found = target.resolve(None, module)
    assert (found.version, found.upper) == ((2, 1), (2, 1)) and name in found.source
    targets = target.FileTargets(target.TargetTF((2, 21), "installed"))
    assert targets.range(str(module)) == ((2, 1), (2, 1)) and targets.pinned(str(module))


@pytest.mark.parametrize(("name", "text"), [
    ("notes_env.txt", "tensorflow=2.1.0=pypi_0\n"),  # no conda header: not a conda list
    ("results.txt", CONDA_LIST),  # not named like an environment: never opened
    ("env.txt", CONDA_LIST.replace("# This file may", "# A file that may")),
])
def test_other_text_files_pin_nothing(tmp_path, name, text):
    module = _project(tmp_path, {name: text})
    assert target.project_pin(module) is None
    targets = target.FileTargets(target.TargetTF((2, 21), "installed"))
    assert not targets.pinned(str(module))
