"""``mx.registry``: MXNet's generic class registry (what ``optimizer.register``/``create`` are made of).

``register = get_register_func(Base, 'optimizer')`` records subclasses of ``Base`` under
their lower-cased names; ``create = get_create_func(Base, 'optimizer')`` builds one from a
name, an instance, a dict ``{'optimizer': 'sgd', ...}``, or a JSON string
(``'["sgd", {"learning_rate": 0.1}]'`` or ``'{"optimizer": "sgd"}'``).
"""
from __future__ import annotations

import json
import warnings
from typing import Any, Callable

from .base import string_types

__all__ = ["get_registry", "get_register_func", "get_alias_func", "get_create_func", "string_types"]

_REGISTRY: dict[type, dict[str, type]] = {}


def get_registry(base_class: type) -> dict[str, type]:
    """A copy of the name -> class table of ``base_class``."""
    return _REGISTRY.setdefault(base_class, {}).copy()


def get_register_func(base_class: type, nickname: str) -> Callable:
    """A ``register(klass, name=None)`` decorator for subclasses of ``base_class``."""
    registry = _REGISTRY.setdefault(base_class, {})

    def register(klass: type, name: str | None = None) -> type:
        if not (isinstance(klass, type) and issubclass(klass, base_class)):
            raise AssertionError(f"Can only register subclass of {base_class.__name__}")
        name = (name or klass.__name__).lower()
        if name in registry:
            old = registry[name]
            warnings.warn(f"New {nickname} {klass.__module__}.{klass.__name__} registered with name {name} "
                          f"is overriding existing {nickname} {old.__module__}.{old.__name__}",
                          UserWarning, stacklevel=2)
        registry[name] = klass
        return klass

    register.__doc__ = f"Register {nickname} to the {nickname} factory"
    return register


def get_alias_func(base_class: type, nickname: str) -> Callable:
    """An ``alias(*names)`` decorator registering a class under several names."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases: str) -> Callable[[type], type]:
        def reg(klass: type) -> type:
            for name in aliases:
                register(klass, name)
            return klass
        return reg
    return alias


def get_create_func(base_class: type, nickname: str) -> Callable:
    """A ``create(name_or_instance_or_config, *args, **kwargs)`` factory for ``base_class``."""
    registry = _REGISTRY.setdefault(base_class, {})

    def create(*args: Any, **kwargs: Any) -> Any:
        if args:
            name, args = args[0], args[1:]
        else:
            name = kwargs.pop(nickname)
        if isinstance(name, base_class):
            if args or kwargs:
                raise AssertionError(f"{nickname} is already an instance. Additional arguments are invalid")
            return name
        if isinstance(name, dict):
            return create(**name)
        if not isinstance(name, string_types):
            raise AssertionError(f"{nickname} must be of string type")
        if name.startswith("["):
            if args or kwargs:
                raise AssertionError(f"{nickname}: a JSON config takes no other arguments")
            name, kwargs = json.loads(name)
            return create(name, **kwargs)
        if name.startswith("{"):
            if args or kwargs:
                raise AssertionError(f"{nickname}: a JSON config takes no other arguments")
            return create(**json.loads(name))
        name = name.lower()
        if name not in registry:
            raise AssertionError(f"{name} is not registered. Please register with {nickname}.register first")
        return registry[name](*args, **kwargs)

    create.__doc__ = (f"Create a {nickname} instance from a name, an instance, a dict or a JSON string; "
                      f"other arguments go to the {base_class.__name__} constructor.")
    return create
