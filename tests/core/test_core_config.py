"""The kernel's config helpers: one-line errors naming the field, [experiment] paper."""

import pytest

from theorylab.core.config import (
    check_choice,
    check_float,
    check_int,
    paper_of,
    read_toml,
    tables_to_toml,
    train_overrides,
)


def test_validators_name_the_field():
    assert check_int("a.n", 3.0) == 3
    with pytest.raises(ValueError, match=r"^a\.n: must be an integer"):
        check_int("a.n", 2.5)
    with pytest.raises(ValueError, match=r"^a\.n: must be >= 1"):
        check_int("a.n", 0, lo=1)
    with pytest.raises(ValueError, match=r"^a\.x: must be finite"):
        check_float("a.x", float("nan"))
    with pytest.raises(ValueError, match=r"^a\.x: must be finite"):
        check_float("a.x", 10**400)
    with pytest.raises(ValueError, match=r"^a\.c: must be one of \['u', 'v'\]"):
        check_choice("a.c", "w", ("u", "v"))


def test_paper_of():
    known = ("jelassi2022", "huang2024")
    assert paper_of({"data": {}}, known, "jelassi2022") == "jelassi2022"
    assert paper_of({"experiment": {"paper": "huang2024"}}, known, "jelassi2022") == "huang2024"
    with pytest.raises(ValueError, match=r"^experiment\.paper: unknown paper 'x' \(known: "):
        paper_of({"experiment": {"paper": "x"}}, known, "jelassi2022")
    with pytest.raises(ValueError, match=r"^experiment\.seed: unknown field"):
        paper_of({"experiment": {"seed": 1}}, known, "jelassi2022")
    with pytest.raises(ValueError, match=r"^experiment: must be a table"):
        paper_of({"experiment": 3}, known, "jelassi2022")


def test_toml_round_trip(tmp_path):
    tables = {"experiment": {"paper": "jelassi2022"},
              "a": {"n": 3, "x": 0.1, "flag": True, "name": 'q"', "sets": [[0, 1], [2]]}}
    path = tmp_path / "c.toml"
    path.write_text(tables_to_toml(tables, header="a header\ntwo lines"))
    assert read_toml(path) == tables
    with pytest.raises(ValueError, match="^config: cannot read"):
        read_toml(tmp_path / "missing.toml")
    path.write_text("[a\n")
    with pytest.raises(ValueError, match="is not valid TOML"):
        read_toml(path)


def test_one_override_rule_for_every_paper():
    """A CUDA device (``cuda`` or ``cuda:N``) without ``--backend`` selects torch; a given
    backend, a CPU and the options left out (None) are taken as they are."""

    class Cfg:
        def __init__(self, train=None):
            self.train = train or {}

        def replace(self, train):
            return Cfg({**self.train, **train})

    for device in ("cuda", "cuda:1"):
        assert train_overrides(Cfg(), {"device": device, "dtype": None}).train == {
            "device": device, "backend": "torch"}
    assert train_overrides(Cfg(), {"device": "cuda", "backend": "numpy"}).train == {
        "device": "cuda", "backend": "numpy"}
    assert train_overrides(Cfg(), {"device": "cpu", "steps": 3}).train == {"device": "cpu",
                                                                           "steps": 3}
    same = Cfg()
    assert train_overrides(same, {"device": None, "steps": None}) is same
