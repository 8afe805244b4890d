"""Every place Eventide steps around pydantic or the list type for speed, fenced in one module.

Ownership: only Eventide's own code calls these, and only on records Eventide built or owns
(the runtime's events and responses, the event lists of the session service). Values from
users, stored JSON or providers go through pydantic's validating constructors, never here.

Validity rule, the same for every helper: a value handed in already has its field's type and
the field has no validator that would have changed or refused it; each helper names what
else its caller must hold. No other module writes a model's ``__dict__``, calls
``object.__setattr__`` or counts references (``tests/core/test_fastpath.py`` checks it; three
lines in modules other developers own are listed there until their owners move them).

Each trick here was measured against the plain version and kept because it won by more than
the noise (figures in each docstring and in ``benchmarks/PROFILE.md``, "Issue 32: the speed
tricks fenced" and "The runtime hot path back within 5%"). Wall time on the shared machine
could not separate the small ones; callgrind's instruction counts can: a single read through
``__dict__`` is no cheaper than the attribute (so only records read three times or more go
through :func:`fields_of`), and ``object.__setattr__`` stays off the per-event path, but two
pydantic assignments per committed event (about 3k instructions each) are worth
:func:`write_fields`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any, Self, SupportsIndex, TypeVar, overload

from pydantic import BaseModel

__all__ = [
    "LentList",
    "assign_fields",
    "blank",
    "construct_trusted",
    "fields_of",
    "hidden_value",
    "init_skipped_by_validation",
    "set_hidden",
    "write_field",
    "write_fields",
]

_M = TypeVar("_M", bound=BaseModel)
_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., None])
_new_object = object.__new__
_set_slot = object.__setattr__
# BaseModel's own storage, written through its descriptors' setters: an instance's field dict
# and its three slots. Each write costs about half of object.__setattr__'s (no argument
# slicing, no check of the instance's class, no lookup of the name): 0.7k vs 1.2k
# instructions under callgrind, four per record built by construct_trusted.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def set_hidden(record: BaseModel, name: str, value: object) -> None:
    """Attach ``value`` to ``record`` under ``name`` (an underscore name that is no field).

    Not a pydantic private attribute: declaring one makes every instance of the class set up
    its private storage (an ``LlmResponse`` built: 1.4-2.8 us without, 3.5-5.7 us with one,
    three timeit runs), to serve the rare record that carries a hidden value (the error
    behind an error response). Never serialized, compared or shown.
    """
    _set_slot(record, name, value)


def hidden_value(record: BaseModel, name: str) -> Any:
    """The value :func:`set_hidden` attached to ``record`` under ``name``, else None."""
    return vars(record).get(name)


def construct_trusted(cls: type[_M], values: dict[str, Any]) -> _M:
    """An instance of ``cls`` with ``values`` (field name -> value) taken as they are, the
    other fields at their defaults, without validation.

    For records built from values already of the fields' types (a response's parts, ids the
    runtime made). Validating costs more per record: an ``Event`` 2.0-3.2 us vs 1.7-1.8 us
    here, an ``LlmResponse`` 1.4-2.2 vs 1.0-1.6, a text ``Part`` 1.2-1.8 vs 1.1-1.6 (timeit,
    load average 8). Only for classes without validators, private attributes or ``model_post_init``
    (checked once per class); ``values`` must name fields.
    """
    template = _templates.get(cls)
    if template is None:
        template = _templates[cls] = _template(cls)
    defaults, factories = template
    fields = defaults.copy()
    for name, factory in factories:
        if name not in values:
            fields[name] = factory()
    fields.update(values)
    instance = _new_object(cls)
    _set_dict(instance, fields)
    _set_fields_set(instance, set(values))
    _set_extra(instance, None)
    _set_private(instance, None)
    return instance


def blank(cls: type[_M]) -> _M:
    """What ``cls()`` gives (every field at its default, none marked set), without
    validating an empty input.

    For the runtime's blank records made per model call: a request's
    ``GenerateContentConfig`` costs about 25k instructions validated (its ``mode="before"``
    validator runs in Python, then 17 fields' defaults), a few hundred this way; an
    ``EventActions`` about 15k validated. Only for classes whose validators all run before
    validation and leave an empty input as it is: checked once per class, by comparing
    what ``cls()`` gives with what this builds.
    """
    build = _blank_builders.get(cls)
    if build is None:
        build = _blank_builders[cls] = _blank_builder(cls)
    return build()  # type: ignore[return-value]


def write_field(record: BaseModel, name: str, value: object) -> None:
    """Set a field of ``record`` without pydantic's ``__setattr__`` (about a microsecond a
    call, for a check ``validate_assignment`` is off for anyway). Owner: the Runner's
    commit loop, filling an event's ``invocation_id`` (a ``str``) once per event."""
    _set_slot(record, name, value)


def assign_fields(record: BaseModel, values: dict[str, Any]) -> None:
    """Set fields of ``record`` as pydantic's ``__setattr__`` does without
    ``validate_assignment`` (the value stored, the field marked set), without its Python
    dispatch: about a microsecond a field. Owners: the workflow's ``NodeRunner`` filling each
    node event's own fields (``invocation_id``, ``author``, ``branch``, ``node_info``'s
    ``path`` and ``output_for``: strings and a list of strings it made), four or five per
    event; an agent node setting its answer's ``output`` (``Any``);
    ``LlmRequest.append_instructions`` setting its config's ``system_instruction`` (a
    ``str``), once per model call."""
    vars(record).update(values)
    record.__pydantic_fields_set__.update(values)


def fields_of(record: BaseModel) -> dict[str, Any]:
    """``record``'s fields, name -> value, as pydantic stores them (the live dict, not a
    copy): read in one pass instead of an attribute read per field, and written only by the
    owner of a fresh copy or as :func:`write_fields` does.

    Worth it from three reads of one record: ``BaseModel`` defines ``__getattr__``, so
    CPython 3.11 does not specialize attribute reads on models, and each read costs about
    0.46k instructions (callgrind: three type-cache lookups and the generic lookup); this
    call costs about 0.97k, then 0.05k a read. (``vars(record)`` costs more than this
    function: 1.1k, its arguments packed in a tuple.) Owners: the session service's commit
    path (``append_event``'s event and session, ``prepare_event_for_commit``'s event),
    ``LlmAgent.resolve`` reading its six hook fields, ``flows.llm_flow`` reading a
    connector's own response into its event, ``flows.request`` deep-copying the fields of a
    config's fresh shallow copy.
    """
    return record.__dict__  # pyright: ignore[reportReturnType] (an instance's, a dict)


def write_fields(record: BaseModel, values: dict[str, Any]) -> None:
    """Set fields of ``record`` as pydantic's ``__setattr__`` does for a model without
    ``validate_assignment`` (the value stored as it is, the name noted as set), without its
    two Python calls per field. Owners: ``Session.record_commit`` (an event's timestamp and
    the log position, per committed event) and the session service handing a read session
    its event list. The record's class must have no ``validate_assignment``, no property or
    private attribute of these names, and not be frozen."""
    fields: dict[str, Any] = record.__dict__  # pyright: ignore[reportAssignmentType]
    fields.update(values)
    record.__pydantic_fields_set__.update(values)


def init_skipped_by_validation(init: _F) -> _F:
    """Mark a record's own ``__init__`` as one pydantic need not run when it validates data.

    Pydantic calls a model's custom ``__init__`` for every record ``model_validate`` or
    ``model_validate_json`` makes, and that ``__init__`` validates the data a second time: an
    ``Event`` read back from its JSON (each session read, each store) cost 10.2 us with
    ``Event.__init__`` run, 5.7 us without (timeit). Owner: ``Event.__init__``, whose only
    work is expanding keyword shorthands (``message=``, ``state=``) that callers write and
    stored records never carry; so ``Event.model_validate`` takes field names only.
    """
    init.__pydantic_base_init__ = True  # type: ignore[attr-defined]
    return init


# Per class: the defaults of its fields, and the fields made by a default factory.
_templates: dict[type[BaseModel], tuple[dict[str, Any], tuple[tuple[str, Any], ...]]] = {}
_IMMUTABLE = (str, int, float, bool, tuple, frozenset)


def _template(
    cls: type[BaseModel], *, before_validators: bool = False
) -> tuple[dict[str, Any], tuple[tuple[str, Any], ...]]:
    decorators = cls.__pydantic_decorators__
    if (
        cls.__private_attributes__
        or cls.__pydantic_post_init__ is not None
        or (decorators.model_validators and not before_validators)
        or decorators.field_validators
        or cls.model_config.get("extra") == "allow"
    ):
        raise TypeError(f"{cls.__name__} cannot be constructed without validation")
    defaults: dict[str, Any] = {}
    factories: list[tuple[str, Any]] = []
    for name, info in cls.model_fields.items():
        if info.default_factory is not None:
            factories.append((name, _factory(info.default_factory)))
            defaults[name] = None
        elif info.is_required():
            defaults[name] = None  # given by every caller (a test checks they are)
        else:
            default: object = info.default
            if default is not None and not isinstance(default, _IMMUTABLE):
                # A mutable default: pydantic copies it for each instance.
                raise TypeError(f"{cls.__name__}.{name} has a mutable default")
            defaults[name] = default
    return defaults, tuple(factories)


_blank_builders: dict[type[BaseModel], Callable[[], BaseModel]] = {}


def _blank_builder(cls: type[BaseModel]) -> Callable[[], BaseModel]:
    """:func:`blank`'s builder for ``cls`` (see its rule), checked against ``cls()``."""
    validators = cls.__pydantic_decorators__.model_validators.values()
    if any(v.info.mode != "before" for v in validators):
        raise TypeError(f"{cls.__name__} has a validator that may change a blank record")
    # Before-validators pass the template's checks here: each must leave an empty input as
    # it is, which the comparison below confirms.
    build = _blank(cls, *_template(cls, before_validators=True))
    made, validated = build(), cls()
    if made.__dict__ != validated.__dict__ or validated.__pydantic_fields_set__:
        raise TypeError(f"{cls.__name__}() is not its fields' defaults")
    return build


def _factory(given: Callable[..., Any]) -> Callable[..., Any]:
    """The default factory to use: a record class (an Event's ``actions`` and empty
    ``node_info``) is built from its template when it can be, not validated (a pydantic
    constructor call per event)."""
    record = given if isinstance(given, type) else None
    if record is None or not issubclass(record, BaseModel):
        return given
    try:
        template = _templates[record] = _templates.get(record) or _template(record)
    except TypeError:
        return given
    return _blank(record, *template)


def _blank(
    record: type[BaseModel], defaults: dict[str, Any], factories: tuple[tuple[str, Any], ...]
) -> Callable[[], BaseModel]:
    """``construct_trusted(record, {})`` as a function of its own: no values to merge, the
    template bound (per Event built, one such record for its ``node_info``, one for its
    ``actions`` when not given)."""

    def build() -> BaseModel:
        fields = defaults.copy()
        for name, factory in factories:
            fields[name] = factory()
        instance = _new_object(record)
        _set_dict(instance, fields)
        _set_fields_set(instance, set())
        _set_extra(instance, None)
        _set_private(instance, None)
        return instance

    return build


class LentList(list[_T]):
    """A list its owner lends out and takes back when the borrower is gone.

    The session service keeps each recently read session's parsed events and lends that very
    list to the ``Session`` it returns, instead of copying the whole history per read: a
    whole-session read plus one append at 5,000 events costs 133k instructions lending, 237k
    copying (callgrind, 40 reads), the copy alone a sixth of a plain turn's ~590k. Taking it
    back is safe only when nobody else holds it (:meth:`held_elsewhere`) and the borrower
    only appended to it: this class notes any other change (``changed``). A change made by
    calling ``list``'s own methods on it directly (``list.__setitem__(events, ...)``) goes
    unnoticed; don't.
    """

    changed = False

    def held_elsewhere(self) -> bool:
        """Whether anything but the one attribute of its owner that holds it refers to this
        list (call it as ``owner.attribute.held_elsewhere()``)."""
        return _references is None or _references(self) > _OWN_REFERENCES

    def _reference_count(self) -> int:
        # The same call shape as held_elsewhere, so the same frames count as references.
        return 0 if _references is None else _references(self)

    def drop_appended(self, kept: int) -> None:
        """For the owner: remove what the borrower appended after the first ``kept``."""
        super().__delitem__(slice(kept, None))  # list's own: not a change

    @overload
    def __setitem__(self, index: SupportsIndex, value: _T, /) -> None: ...
    @overload
    def __setitem__(self, index: slice, value: Iterable[_T], /) -> None: ...
    def __setitem__(self, index: SupportsIndex | slice, value: Any, /) -> None:
        self.changed = True
        super().__setitem__(index, value)

    def __delitem__(self, index: SupportsIndex | slice, /) -> None:
        self.changed = True
        super().__delitem__(index)

    def __imul__(self, value: SupportsIndex, /) -> Self:
        self.changed = True
        return super().__imul__(value)

    def insert(self, index: SupportsIndex, value: _T, /) -> None:
        self.changed = True
        super().insert(index, value)

    def pop(self, index: SupportsIndex = -1, /) -> _T:
        self.changed = True
        return super().pop(index)

    def remove(self, value: _T, /) -> None:
        self.changed = True
        super().remove(value)

    def clear(self) -> None:
        self.changed = True
        super().clear()

    def reverse(self) -> None:
        self.changed = True
        super().reverse()

    def sort(self, *, key: Any = None, reverse: bool = False) -> None:
        self.changed = True
        super().sort(key=key, reverse=reverse)


# PyPy has no reference counts: there a lent list is never taken back, only copied.
_references: Callable[[object], int] | None = getattr(sys, "getrefcount", None)


class _Holder:
    __slots__ = ("items",)

    def __init__(self, items: LentList[Any]) -> None:
        self.items = items


def _own_references() -> int:
    """What getrefcount reports, inside :meth:`LentList.held_elsewhere`, for a list that one
    attribute alone holds (whether a call's arguments count depends on the interpreter, so
    it is measured, through a method called the same way)."""
    holder = _Holder(LentList())
    return holder.items._reference_count()  # pyright: ignore[reportPrivateUsage]


_OWN_REFERENCES = _own_references()
