"""mx.registry: register / alias / create for a base class, MXNet's config forms."""
import json

import pytest

from mxjax import registry


class _Base:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class _Sgd(_Base):
    pass


class _Adam(_Base):
    pass


register = registry.get_register_func(_Base, "thing")
alias = registry.get_alias_func(_Base, "thing")
create = registry.get_create_func(_Base, "thing")
register(_Sgd)
alias("adam", "adam_alias")(_Adam)


def test_register_lowercases_and_get_registry_copies():
    table = registry.get_registry(_Base)
    assert table["_sgd"] is _Sgd and table["adam"] is _Adam and table["adam_alias"] is _Adam
    table["x"] = None
    assert "x" not in registry.get_registry(_Base)


def test_create_from_name_instance_dict_and_json():
    made = create("_SGD", 1, lr=0.1)
    assert isinstance(made, _Sgd) and made.args == (1,) and made.kwargs == {"lr": 0.1}
    assert create(made) is made
    assert isinstance(create(thing="adam"), _Adam)
    assert create({"thing": "adam_alias", "lr": 2}).kwargs == {"lr": 2}
    assert create(json.dumps(["adam", {"lr": 3}])).kwargs == {"lr": 3}
    assert create(json.dumps({"thing": "_sgd", "lr": 4})).kwargs == {"lr": 4}


def test_create_errors():
    with pytest.raises(AssertionError, match="nope is not registered. Please register with thing.register"):
        create("nope")
    with pytest.raises(AssertionError, match="already an instance"):
        create(_Sgd(), 1)
    with pytest.raises(AssertionError, match="must be of string type"):
        create(3)


def test_register_checks_subclass_and_warns_on_override():
    with pytest.raises(AssertionError, match="Can only register subclass of _Base"):
        register(int)

    class Other(_Base):
        pass

    with pytest.warns(UserWarning, match="is overriding existing thing"):
        register(Other, "adam_alias")
    with pytest.warns(UserWarning):
        register(_Adam, "adam_alias")  # put it back
