"""The published factsheet JSON Schema types every value: a registry can rely on every field's shape.

An untyped place is a schema that says nothing about its value: `{}` or `true` (pydantic's `Any`), a schema
with none of type/$ref/anyOf/oneOf/allOf/const/enum, or an object with neither `properties` nor an
`additionalProperties` schema (`dict` / `dict[str, Any]`)."""

from factsheet.api.json_schemas import json_schemas

TYPED = ("type", "$ref", "anyOf", "oneOf", "allOf", "const", "enum")
NESTED_MAPS = ("properties", "$defs", "patternProperties")
NESTED_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
NESTED_ONE = ("items", "additionalProperties", "not")


def untyped(node, path: str = "#") -> list[str]:
    """JSON pointers of every untyped schema under `node` (a schema)."""
    if node is True or node == {}:
        return [path]
    if not isinstance(node, dict):
        return []
    out = []
    if not any(k in node for k in TYPED):
        out.append(path)
    elif node.get("type") == "object" and "properties" not in node:
        extra = node.get("additionalProperties")
        if not isinstance(extra, dict) or not extra:
            out.append(path)
    for key in NESTED_MAPS:
        for name, sub in node.get(key, {}).items():
            out += untyped(sub, f"{path}/{key}/{name}")
    for key in NESTED_LISTS:
        for i, sub in enumerate(node.get(key, [])):
            out += untyped(sub, f"{path}/{key}/{i}")
    for key in NESTED_ONE:
        if key in node and node[key] is not False:
            out += untyped(node[key], f"{path}/{key}")
    return out


def test_the_walk_finds_what_pydantic_leaves_untyped():
    # known truth: the shapes `Any`, `dict` and `dict[str, Any]` give, and typed ones that must pass
    assert untyped({"type": "object", "properties": {"a": {}, "b": {"type": "object"}}}) == [
        "#/properties/a",
        "#/properties/b",
    ]
    assert untyped({"type": "object", "additionalProperties": True}) == ["#", "#/additionalProperties"]
    assert untyped({"type": "array", "items": {"title": "X"}}) == ["#/items"]
    assert untyped({"type": "object", "additionalProperties": {"type": "number"}}) == []
    assert (
        untyped({"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}], "$defs": {"A": {"type": "string"}}})
        == []
    )


def test_factsheet_schema_has_no_untyped_object():
    schema = json_schemas()["v1/factsheet.schema.json"]
    assert untyped(schema) == []
